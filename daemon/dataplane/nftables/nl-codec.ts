// nf_tables netlink messages for the incremental changes of the nftables dataplane. Pure: bytes in, bytes out.
//
// What it writes is one transaction (NFNL_MSG_BATCH_BEGIN … END) that changes one service's slot map —
// the named interval map `svc-…-a|b` (`typeof numgen inc mod N : ip daddr . tcp dport`, render.ts) that its
// slot chain's DNAT rule looks up — and, when the slot space (the rule's `mod`) changes, the rule itself
// (a flush of the slot chain and the new rule, in the same transaction). nft re-reads the whole table
// before every command, so its cost grows with the table; these messages do not (bench/nft-change.ts).
//
// The layout of each message is the one nft 1.0.6 sends for the same command (captured with strace; the
// unit test compares the bytes), with one difference: nft also names the set by its transaction id
// (NFTA_*_SET_ID); lvsd names it only by name, which the kernel looks up first.
import { parseIP } from '../../net/addr.js';
import { attr, nest, NLA_F_NESTED, NLA_TYPE_MASK } from '../../net/nlattr.js';

export const NFNL_SUBSYS_NFTABLES = 10;
export const NFNL_MSG_BATCH_BEGIN = 0x10;
export const NFNL_MSG_BATCH_END = 0x11;
export const NFT_MSG = { NEWRULE: 6, DELRULE: 8, NEWSETELEM: 12, DELSETELEM: 14 } as const;
export const NLM_F = { REQUEST: 0x1, ACK: 0x4, CREATE: 0x400, APPEND: 0x800 } as const;
export const NLMSG_ERROR = 2;
export const NFPROTO = { INET: 1, IPV4: 2, IPV6: 10 } as const;

// <linux/netfilter/nf_tables.h>
const RULE = { TABLE: 1, CHAIN: 2, EXPRESSIONS: 4 } as const;
const LIST_ELEM = 1;
const EXPR = { NAME: 1, DATA: 2 } as const;
const SET_ELEM_LIST = { TABLE: 1, SET: 2, ELEMENTS: 3 } as const;
const SET_ELEM = { KEY: 1, DATA: 2, FLAGS: 3, USERDATA: 6 } as const;
const DATA_VALUE = 1;
const NFT_SET_ELEM_INTERVAL_END = 1;
/** libnftnl's element userdata: NFTNL_UDATA_SET_ELEM_FLAGS = NFTNL_SET_ELEM_F_INTERVAL_OPEN (an interval to the top). */
const UDATA_INTERVAL_OPEN = Buffer.from([1, 4, 1, 0, 0, 0]);
const NFT_REG_1 = 1;
const NFT_REG32_00 = 8;
const META_L4PROTO = 16;
const META_NFPROTO = 15;
const CMP_EQ = 0;
const BYTEORDER_HTON = 1;
const PAYLOAD_NETWORK_HEADER = 1;
const NAT_DNAT = 1;
const IPPROTO: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132 };

function cstr(s: string): Buffer {
  return Buffer.from(`${s}\0`);
}

function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

/** One netlink message with its nfgenmsg header (family, version 0, res_id big-endian). */
export function message(type: number, flags: number, seq: number, family: number, resId: number, payload: Buffer): Buffer {
  const b = Buffer.alloc(20 + payload.length);
  b.writeUInt32LE(b.length, 0);
  b.writeUInt16LE(type, 4);
  b.writeUInt16LE(flags, 6);
  b.writeUInt32LE(seq >>> 0, 8);
  b.writeUInt32LE(0, 12);
  b.writeUInt8(family, 16);
  b.writeUInt8(0, 17);
  b.writeUInt16BE(resId, 18);
  payload.copy(b, 20);
  return b;
}

/** One command of a batch: its message type (NFT_MSG_*), flags beyond REQUEST|ACK, and attributes. */
export interface NftOp {
  cmd: number;
  flags: number;
  payload: Buffer;
}

/** The batch as one buffer, and the sequence numbers whose acks say it went through (one per command). */
export function encodeBatch(ops: readonly NftOp[], firstSeq: number): { bytes: Buffer; seqs: number[] } {
  let seq = firstSeq;
  const parts = [message(NFNL_MSG_BATCH_BEGIN, NLM_F.REQUEST, seq++, 0, NFNL_SUBSYS_NFTABLES, Buffer.alloc(0))];
  const seqs: number[] = [];
  for (const op of ops) {
    seqs.push(seq);
    parts.push(message((NFNL_SUBSYS_NFTABLES << 8) | op.cmd, NLM_F.REQUEST | NLM_F.ACK | op.flags, seq++, NFPROTO.INET, 0, op.payload));
  }
  parts.push(message(NFNL_MSG_BATCH_END, NLM_F.REQUEST, seq++, 0, NFNL_SUBSYS_NFTABLES, Buffer.alloc(0)));
  return { bytes: Buffer.concat(parts), seqs };
}

/** The errno of each NLMSG_ERROR in a reply datagram, by sequence number (0 = an ack). */
export function decodeAcks(buf: Buffer): Map<number, number> {
  const out = new Map<number, number>();
  for (let off = 0; off + 16 <= buf.length; ) {
    const len = buf.readUInt32LE(off);
    if (len < 16) break;
    if (buf.readUInt16LE(off + 4) === NLMSG_ERROR && off + 20 <= buf.length) out.set(buf.readUInt32LE(off + 8), Math.abs(buf.readInt32LE(off + 16)));
    off += (len + 3) & ~3;
  }
  return out;
}

/** One interval of the slot map: slots [from, to] → a real server (port 0: the map's data is the address alone). */
export interface SlotRange {
  from: number;
  to: number;
  address: string;
  port: number;
}

/** An attribute's header: its length (without the padding) and type. */
function header(b: Buffer, off: number, len: number, type: number): void {
  b.writeUInt16LE(len, off);
  b.writeUInt16LE(type, off + 2);
}

const NO_BYTES = Buffer.alloc(0);
/** Real servers' addresses as bytes: a table names the same few thousand at most, over and over. */
const addresses = new Map<string, Buffer>();

function addressBytes(address: string): Buffer {
  let a = addresses.get(address);
  if (a === undefined) {
    if (addresses.size >= 65_536) addresses.clear();
    a = parseIP(address);
    addresses.set(address, a);
  }
  return a;
}

/** A NUL-terminated name's attribute, padded: its length on the wire. */
const nameSize = (name: Buffer): number => (4 + name.length + 3) & ~3;

/**
 * One message's attributes for the map's elements `ranges[from, to)` (sorted, contiguous from 0): each
 * range's start with its data, then the start of the next as an interval end — except the last, which is
 * open to 2^32-1. So every value a rule may look up has an element, even one computed under a previous,
 * larger `mod` by a packet that walked the old rule while this transaction committed (render.ts says why
 * that matters). The data: the address, then the port in network order padded to a 32-bit register (as
 * concat data is).
 * Written straight into one buffer, sized first: a fresh table's program is ~20,000 of these elements at
 * 1,000 × 10 (fresh.ts), and an attribute object per field cost ~70 ms of CPU there (measured).
 */
function elementList(table: string, set: string, ranges: readonly SlotRange[], withPort: boolean, withData: boolean, from: number, to: number): Buffer {
  const tname = cstr(table);
  const sname = cstr(set);
  const addrs: Buffer[] = [];
  let size = nameSize(tname) + nameSize(sname) + 4;
  for (let i = from; i < to; i++) {
    const r = ranges[i];
    if (r === undefined) continue;
    const a = withData ? addressBytes(r.address) : NO_BYTES;
    addrs.push(a);
    // the start: its nest, the key (nest + value); its data (nest + value); the open end's userdata (10 → 12)
    size += 4 + 12 + (withData ? 8 + a.length + (withPort ? 4 : 0) : 0) + (i === ranges.length - 1 ? 12 : 24);
  }
  const b = Buffer.alloc(size);
  let off = 0;
  const name = (type: number, n: Buffer): void => {
    header(b, off, 4 + n.length, type);
    n.copy(b, off + 4);
    off += nameSize(n);
  };
  name(SET_ELEM_LIST.TABLE, tname);
  name(SET_ELEM_LIST.SET, sname);
  header(b, off, size - off, SET_ELEM_LIST.ELEMENTS | NLA_F_NESTED);
  off += 4;
  const key = (k: number): void => {
    header(b, off, 12, SET_ELEM.KEY | NLA_F_NESTED);
    header(b, off + 4, 8, DATA_VALUE);
    b.writeUInt32BE(k >>> 0, off + 8);
    off += 12;
  };
  // libnftnl numbers the list's entries 1, 2, 3 … (the kernel ignores the type); so does lvsd, byte for byte.
  let n = 0;
  for (let i = from; i < to; i++) {
    const r = ranges[i];
    const a = addrs[i - from];
    if (r === undefined || a === undefined) continue;
    const last = i === ranges.length - 1;
    const dlen = withData ? a.length + (withPort ? 4 : 0) : 0;
    header(b, off, 4 + 12 + (withData ? 8 + dlen : 0) + (last ? 12 : 0), ++n | NLA_F_NESTED);
    off += 4;
    key(r.from);
    if (withData) {
      header(b, off, 8 + dlen, SET_ELEM.DATA | NLA_F_NESTED);
      header(b, off + 4, 4 + dlen, DATA_VALUE);
      a.copy(b, off + 8);
      if (withPort) b.writeUInt16BE(r.port, off + 8 + a.length);
      off += 8 + dlen;
    }
    if (last) {
      header(b, off, 4 + UDATA_INTERVAL_OPEN.length, SET_ELEM.USERDATA);
      UDATA_INTERVAL_OPEN.copy(b, off + 4);
      off += 12;
    } else {
      header(b, off, 24, ++n | NLA_F_NESTED);
      header(b, off + 4, 8, SET_ELEM.FLAGS);
      b.writeUInt32BE(NFT_SET_ELEM_INTERVAL_END, off + 8);
      off += 12;
      key(r.to + 1);
    }
  }
  return b;
}

/** Removes the intervals `ranges` (as last written) from slot map `set`. */
export function delSlotElements(table: string, set: string, ranges: readonly SlotRange[]): NftOp {
  const withPort = ranges.some((r) => r.port !== 0);
  return { cmd: NFT_MSG.DELSETELEM, flags: 0, payload: elementList(table, set, ranges, withPort, false, 0, ranges.length) };
}

/** Adds the intervals `ranges` to slot map `set` (its data has a port unless every range's port is 0). */
export function newSlotElements(table: string, set: string, ranges: readonly SlotRange[]): NftOp {
  const withPort = ranges.some((r) => r.port !== 0);
  return { cmd: NFT_MSG.NEWSETELEM, flags: NLM_F.CREATE, payload: elementList(table, set, ranges, withPort, true, 0, ranges.length) };
}

/**
 * Ranges per element message. An attribute's length is 16 bits, so a list of thousands of intervals (a
 * Maglev map, a wide hashed one) cannot be one message: it goes as several in the same batch (libnftnl
 * splits its lists too). 400 ranges of IPv6 address and port data stay well under 64 KiB.
 */
export const RANGES_PER_MESSAGE = 400;

/** delSlotElements / newSlotElements for any number of ranges: as many messages as the list needs. */
export function slotElementOps(verb: 'add' | 'delete', table: string, set: string, ranges: readonly SlotRange[]): NftOp[] {
  const withPort = ranges.some((r) => r.port !== 0);
  const add = verb === 'add';
  const out: NftOp[] = [];
  for (let i = 0; i < ranges.length; i += RANGES_PER_MESSAGE) {
    const payload = elementList(table, set, ranges, withPort, add, i, Math.min(ranges.length, i + RANGES_PER_MESSAGE));
    out.push(add ? { cmd: NFT_MSG.NEWSETELEM, flags: NLM_F.CREATE, payload } : { cmd: NFT_MSG.DELSETELEM, flags: 0, payload });
  }
  return out;
}

const DATA_VERDICT = 2;
const VERDICT = { CODE: 1, CHAIN: 2 } as const;
const NFT_GOTO = -4;

/** An element of a verdict map (svc4, svc6, fwmark4, fwmark6): its key's bytes, and the chain it goes to. */
export interface GotoElement {
  key: Buffer;
  chain: string;
}

/** The key of svc4/svc6 (`ipv4_addr . inet_proto . inet_service`): each field padded to 4 bytes, the port in network order. */
export function tupleKey(address: string, protocol: 'tcp' | 'udp' | 'sctp', port: number): Buffer {
  const a = addressBytes(address);
  const k = Buffer.alloc(a.length + 8);
  a.copy(k, 0);
  k.writeUInt8(IPPROTO[protocol] ?? 0, a.length);
  k.writeUInt16BE(port, a.length + 4);
  return k;
}

/** The key of fwmark4/fwmark6 (`mark`): a 32-bit integer in host order, as nft writes it. */
export function markKey(mark: number): Buffer {
  const k = Buffer.alloc(4);
  k.writeUInt32LE(mark >>> 0, 0);
  return k;
}

/** Adds `elements` (key : goto chain) to verdict map `set`: as many messages as the list needs. */
export function gotoElementOps(table: string, set: string, elements: readonly GotoElement[]): NftOp[] {
  const out: NftOp[] = [];
  for (let i = 0; i < elements.length; i += RANGES_PER_MESSAGE) {
    const list = elements.slice(i, i + RANGES_PER_MESSAGE).map((e, k) =>
      nest(k + 1, [
        nest(SET_ELEM.KEY, [attr(DATA_VALUE, e.key)]),
        nest(SET_ELEM.DATA, [nest(DATA_VERDICT, [attr(VERDICT.CODE, u32be(NFT_GOTO)), attr(VERDICT.CHAIN, cstr(e.chain))])]),
      ]));
    const payload = Buffer.concat([attr(SET_ELEM_LIST.TABLE, cstr(table)), attr(SET_ELEM_LIST.SET, cstr(set)), nest(SET_ELEM_LIST.ELEMENTS, list)]);
    out.push({ cmd: NFT_MSG.NEWSETELEM, flags: NLM_F.CREATE, payload });
  }
  return out;
}

function expr(name: string, data: Buffer[]): Buffer {
  return nest(LIST_ELEM, [attr(EXPR.NAME, cstr(name)), nest(EXPR.DATA, data)]);
}

const u32attr = (type: number, n: number): Buffer => attr(type, u32be(n));

/** Removes every rule of `chain` (a DELRULE without a handle: what `nft flush chain` sends). */
export function flushChain(table: string, chain: string): NftOp {
  return { cmd: NFT_MSG.DELRULE, flags: 0, payload: Buffer.concat([attr(RULE.TABLE, cstr(table)), attr(RULE.CHAIN, cstr(chain))]) };
}

/** The DNAT rule of a slot chain, as render.ts's serviceRule writes it for a named slot map. */
export interface SlotRuleSpec {
  table: string;
  chain: string;
  /** The slot map's name. */
  map: string;
  family: 4 | 6;
  /** The service's protocol: the `meta l4proto` match a port mapping needs; undefined = no match (no ports). */
  l4proto?: 'tcp' | 'udp' | 'sctp';
  /** Slot space size. */
  mod: number;
  /** numgen inc, or jhash of one address field (saddr/daddr) with this seed. */
  dispatch: { kind: 'numgen' } | { kind: 'jhash'; field: 'saddr' | 'daddr'; seed: number };
  withPort: boolean;
}

/** `counter [meta l4proto P] dnat ip to (numgen inc | jhash ip F) mod N map @MAP`, appended to the chain. */
export function newSlotRule(s: SlotRuleSpec): NftOp {
  const exprs: Buffer[] = [expr('counter', [])];
  if (s.l4proto !== undefined) {
    exprs.push(expr('meta', [u32attr(2, META_L4PROTO), u32attr(1, NFT_REG_1)]));
    exprs.push(expr('cmp', [u32attr(1, NFT_REG_1), u32attr(2, CMP_EQ), nest(3, [attr(DATA_VALUE, Buffer.from([IPPROTO[s.l4proto] ?? 0]))])]));
  }
  const addrLen = s.family === 4 ? 4 : 16;
  if (s.dispatch.kind === 'numgen') {
    // NFTA_NG_DREG, _MODULUS, _TYPE (0 = inc), _OFFSET
    exprs.push(expr('numgen', [u32attr(1, NFT_REG_1), u32attr(2, s.mod), u32attr(3, 0), u32attr(4, 0)]));
  } else {
    // An inet table: the address payload needs the network protocol matched first (nft adds the same).
    exprs.push(expr('meta', [u32attr(2, META_NFPROTO), u32attr(1, NFT_REG_1)]));
    exprs.push(expr('cmp', [u32attr(1, NFT_REG_1), u32attr(2, CMP_EQ), nest(3, [attr(DATA_VALUE, Buffer.from([s.family === 4 ? NFPROTO.IPV4 : NFPROTO.IPV6]))])]));
    const offset = s.family === 4 ? (s.dispatch.field === 'saddr' ? 12 : 16) : s.dispatch.field === 'saddr' ? 8 : 24;
    // NFTA_PAYLOAD_DREG, _BASE, _OFFSET, _LEN
    exprs.push(expr('payload', [u32attr(1, 2), u32attr(2, PAYLOAD_NETWORK_HEADER), u32attr(3, offset), u32attr(4, addrLen)]));
    // NFTA_HASH_SREG, _DREG, _LEN, _MODULUS, _SEED, _OFFSET, _TYPE (0 = jenkins)
    exprs.push(expr('hash', [u32attr(1, 2), u32attr(2, NFT_REG_1), u32attr(3, addrLen), u32attr(4, s.mod), u32attr(5, s.dispatch.seed), u32attr(6, 0), u32attr(7, 0)]));
  }
  // The map has intervals, whose keys the kernel compares as big-endian bytes: numgen/hash write host order.
  exprs.push(expr('byteorder', [u32attr(1, NFT_REG_1), u32attr(2, NFT_REG_1), u32attr(3, BYTEORDER_HTON), u32attr(4, 4), u32attr(5, 4)]));
  // NFTA_LOOKUP_SREG, _DREG, _SET
  exprs.push(expr('lookup', [u32attr(2, NFT_REG_1), u32attr(3, NFT_REG_1), attr(1, cstr(s.map))]));
  // NFTA_NAT_TYPE, _FAMILY, _REG_ADDR_MIN, [_REG_PROTO_MIN: the 32-bit register after the address]
  const nat = [u32attr(1, NAT_DNAT), u32attr(2, s.family === 4 ? NFPROTO.IPV4 : NFPROTO.IPV6), u32attr(3, NFT_REG_1)];
  if (s.withPort) nat.push(u32attr(5, NFT_REG32_00 + addrLen / 4));
  exprs.push(expr('nat', nat));
  return {
    cmd: NFT_MSG.NEWRULE,
    flags: NLM_F.CREATE | NLM_F.APPEND,
    payload: Buffer.concat([attr(RULE.TABLE, cstr(s.table)), attr(RULE.CHAIN, cstr(s.chain)), nest(RULE.EXPRESSIONS, exprs)]),
  };
}

/** A decoded attribute tree (for tests and diagnostics): nested attributes as children, others as hex. */
export interface AttrNode {
  type: number;
  children?: AttrNode[];
  hex?: string;
}

export function decodeAttrs(buf: Buffer): AttrNode[] {
  const out: AttrNode[] = [];
  for (let off = 0; off + 4 <= buf.length; ) {
    const len = buf.readUInt16LE(off);
    const t = buf.readUInt16LE(off + 2);
    if (len < 4) break;
    const body = buf.subarray(off + 4, off + len);
    out.push((t & NLA_F_NESTED) !== 0 ? { type: t & NLA_TYPE_MASK, children: decodeAttrs(body) } : { type: t & NLA_TYPE_MASK, hex: body.toString('hex') });
    off += (len + 3) & ~3;
  }
  return out;
}
