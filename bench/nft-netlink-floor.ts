// The kernel's own cost of one small nf_tables transaction, without nft: one netlink batch that replaces an
// element of the table's svc4 verdict map (delete + add of the same key in one transaction), sent from this
// process. nft re-reads the table into its cache before every command, which is what makes a change grow
// with the table (nft-change.ts prints both); this is the figure a netlink writer would start from.
// MODE "vmap" replaces an element of svc4 (its data a goto: the kernel then re-validates the whole table's
// jump graph at commit); MODE "data" one of the map `probe4` (mark → ipv4_addr), whose data is a value.
// Run inside the director's namespace by nft-change.ts:
//   ip netns exec NS node dist/bench/nft-netlink-floor.js TABLE CHAIN ROUNDS MODE
import { RawNetlinkSocket } from 'netlink';
import { attr, nest } from '../daemon/net/nlattr.js';
import { message } from '../daemon/dataplane/nftables/nl-codec.js';

const [table = 'lvsdbench', chain = '', roundsArg = '21', mode = 'vmap'] = process.argv.slice(2);
const vmap = mode === 'vmap';
const NETLINK_NETFILTER = 12;
const NFNL_SUBSYS_NFTABLES = 10;
const NFNL_MSG_BATCH_BEGIN = 0x10;
const NFNL_MSG_BATCH_END = 0x11;
const NFT_MSG_NEWSETELEM = 12;
const NFT_MSG_DELSETELEM = 14;
const NLM_F_REQUEST = 0x1;
const NLM_F_ACK = 0x4;
const NLM_F_CREATE = 0x400;
const NLMSG_ERROR = 2;
const NFPROTO_INET = 1;
const NFT_GOTO = -4;

const nested = (type: number, ...parts: Buffer[]): Buffer => nest(type, parts);
const cstr = (s: string): Buffer => Buffer.from(`${s}\0`);
function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

/** svc4's key (ipv4_addr . inet_proto . inet_service): each field padded to 4 bytes; probe4's: a mark. */
function key(): Buffer {
  if (!vmap) return u32be(7);
  const k = Buffer.alloc(12);
  Buffer.from([10, 250, 0, 1]).copy(k, 0);
  k.writeUInt8(6, 4);
  k.writeUInt16BE(8080, 8);
  return k;
}

function elements(withData: boolean): Buffer {
  const parts = [nested(1, attr(1, key()))];
  if (withData) parts.push(vmap ? nested(2, nested(2, attr(1, u32be(NFT_GOTO)), attr(2, cstr(chain)))) : nested(2, attr(1, Buffer.from([10, 201, 0, 1]))));
  return Buffer.concat([attr(1, cstr(table)), attr(2, cstr(vmap ? 'svc4' : 'probe4')), nested(3, nested(1, ...parts))]);
}

const sock = new RawNetlinkSocket(NETLINK_NETFILTER, { recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 });
let seq = 1;
let waiting: { seqs: Set<number>; done: (err?: Error) => void } | undefined;
sock.on('message', (buf: Buffer) => {
  for (let off = 0; off + 16 <= buf.length; ) {
    const len = buf.readUInt32LE(off);
    const type = buf.readUInt16LE(off + 4);
    const s = buf.readUInt32LE(off + 8);
    if (type === NLMSG_ERROR && waiting?.seqs.has(s) === true) {
      const errno = buf.readInt32LE(off + 16);
      waiting.seqs.delete(s);
      if (errno !== 0) waiting.done(new Error(`netlink errno ${-errno} (seq ${s})`));
      else if (waiting.seqs.size === 0) waiting.done();
    }
    off += (len + 3) & ~3;
    if (len === 0) break;
  }
});

/** One transaction: delete the element (unless first), add it; resolves on both acks. */
function batch(first: boolean): Promise<void> {
  const msgs: Buffer[] = [message(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, seq++, 0, NFNL_SUBSYS_NFTABLES, Buffer.alloc(0))];
  const seqs = new Set<number>();
  const sub = (cmd: number): number => (NFNL_SUBSYS_NFTABLES << 8) | cmd;
  if (!first) {
    seqs.add(seq);
    msgs.push(message(sub(NFT_MSG_DELSETELEM), NLM_F_REQUEST | NLM_F_ACK, seq++, NFPROTO_INET, 0, elements(false)));
  }
  seqs.add(seq);
  msgs.push(message(sub(NFT_MSG_NEWSETELEM), NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, seq++, NFPROTO_INET, 0, elements(true)));
  msgs.push(message(NFNL_MSG_BATCH_END, NLM_F_REQUEST, seq++, 0, NFNL_SUBSYS_NFTABLES, Buffer.alloc(0)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('no ack in 5 s')); }, 5000);
    waiting = { seqs, done: (err) => { clearTimeout(timer); if (err === undefined) resolve(); else reject(err); } };
    sock.send(Buffer.concat(msgs));
  });
}

const times: number[] = [];
await batch(true);
for (let i = 0; i < Number(roundsArg); i++) {
  const t0 = performance.now();
  await batch(false);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ medianMs: times[times.length >> 1], minMs: times[0] })}\n`);
sock.close();
