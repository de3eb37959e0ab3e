// The nf_tables netlink codec against the bytes nft 1.0.6 itself sent for the same commands (captured with
// `strace -e write=3 nft '…'` on table inet t19, map m4 `typeof numgen inc mod 10 : ip daddr . tcp dport;
// flags interval`). Each fixture is the message's payload after the nlmsghdr (nfgenmsg included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeAcks, decodeAttrs, delSlotElements, encodeBatch, flushChain, gotoElementOps, markKey, message, newSlotElements, newSlotRule, NFT_MSG, NLM_F, NLMSG_ERROR, tupleKey,
  type AttrNode, type NftOp,
} from '../../daemon/dataplane/nftables/nl-codec.js';

const NFGEN_INET = '01000000';

/** nft also names the set by its transaction id in an element list (NFTA_SET_ELEM_LIST_SET_ID, type 4 at the top); lvsd does not. */
function withoutListSetId(nodes: AttrNode[]): AttrNode[] {
  return nodes.filter((n) => n.type !== 4);
}

/** nft also names the set by its transaction id in lookup (type 4 beside NFTA_LOOKUP_SET "m4"); lvsd does not. */
function withoutSetId(nodes: AttrNode[]): AttrNode[] {
  const inLookup = nodes.some((n) => n.type === 1 && n.hex === Buffer.from('m4\0').toString('hex'));
  return nodes.filter((n) => !(inLookup && n.type === 4)).map((n) => (n.children === undefined ? n : { ...n, children: withoutSetId(n.children) }));
}

function same(op: NftOp, captured: string, cmd: number): void {
  assert.equal(op.cmd, cmd);
  assert.ok(captured.startsWith(NFGEN_INET));
  assert.deepEqual(withoutSetId(decodeAttrs(op.payload)), withoutSetId(decodeAttrs(Buffer.from(captured.slice(8), 'hex'))));
}

test('delete element { 0-4 }: the start and its interval end, byte for byte', () => {
  const nft = '010000000800010074313900070002006d3400002c000380100001800c00018008000100000000001800028008000300000000010c0001800800010000000005';
  // lvsd's last range is open to the top; nft's `{ 0-4 }` is closed: compare the first of two ranges.
  const closed = delSlotElements('t19', 'm4', [{ from: 0, to: 4, address: '10.0.0.1', port: 80 }, { from: 5, to: 9, address: '10.0.0.2', port: 81 }]);
  const nodes = decodeAttrs(closed.payload);
  const list = nodes[2]?.children ?? [];
  // The closed first range is exactly nft's two entries.
  assert.deepEqual({ ...nodes[2], children: list.slice(0, 2) }, decodeAttrs(Buffer.from(nft.slice(8), 'hex'))[2]);
  assert.deepEqual(nodes.slice(0, 2), decodeAttrs(Buffer.from(nft.slice(8), 'hex')).slice(0, 2));
});

test('delete element { 5-4294967295 }: an open interval, with the userdata nft gives it', () => {
  const nft = '010000000800010074313900070002006d340000200003801c0001800c00018008000100000000050a0006000104010000000000';
  same(delSlotElements('t19', 'm4', [{ from: 5, to: 9, address: '10.0.0.2', port: 81 }]), nft, NFT_MSG.DELSETELEM);
});

test('add element { 5-6 : 10.0.0.1 . 80, 7-4294967295 : 10.0.0.2 . 81 }, byte for byte but the set id', () => {
  const nft =
    '010000000800010074313900070002006d340000080004000000000168000380200001800c0001800800010000000005100002800c0001000a000001005000001800028008000300000000010c00018008000100000000072c0003800c0001800800010000000007100002800c0001000a000002005100000a0006000104010000000000';
  const op = newSlotElements('t19', 'm4', [{ from: 5, to: 6, address: '10.0.0.1', port: 80 }, { from: 7, to: 9, address: '10.0.0.2', port: 81 }]);
  assert.equal(op.flags, NLM_F.CREATE);
  // The top-level set id (type 4) is the one attribute nft adds: drop it from nft's bytes and they are equal.
  const nftNodes = decodeAttrs(Buffer.from(nft.slice(8), 'hex')).filter((n) => n.type !== 4);
  assert.deepEqual(decodeAttrs(op.payload), nftNodes);
});

test('flush chain + the numgen slot rule: nft\'s DELRULE and NEWRULE', () => {
  same(flushChain('t19', 'c'), '0100000008000100743139000600020063000000', NFT_MSG.DELRULE);
  const nft =
    '010000000800010074313900060002006300000040010480140001800c000100636f756e746572000400028024000180090001006d6574610000000014000280080002000000001008000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010006000000340001800b0001006e756d67656e0000240002800800010000000001080002000000000708000300000000000800040000000000400001800e000100627974656f726465720000002c00028008000100000000010800020000000001080003000000000108000400000000040800050000000004340001800b0001006c6f6f6b757000002400028008000200000000010800030000000001070001006d340000080004000000000130000180080001006e617400240002800800010000000001080002000000000208000300000000010800050000000009';
  const op = newSlotRule({ table: 't19', chain: 'c', map: 'm4', family: 4, l4proto: 'tcp', mod: 7, dispatch: { kind: 'numgen' }, withPort: true });
  assert.equal(op.flags, NLM_F.CREATE | NLM_F.APPEND);
  same(op, nft, NFT_MSG.NEWRULE);
});

test('the jhash slot rule: nfproto dependency, payload, hash with seed', () => {
  const nft =
    '010000000800010074313900060002006a000000dc010480140001800c000100636f756e746572000400028024000180090001006d6574610000000014000280080002000000001008000100000000012c00018008000100636d700020000280080001000000000108000200000000000c000380050001000600000024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000020800020000000001080003000000000c08000400000000044c0001800900010068617368000000003c0002800800010000000002080002000000000108000300000000040800040000000009080005000000000508000600000000000800070000000000400001800e000100627974656f726465720000002c00028008000100000000010800020000000001080003000000000108000400000000040800050000000004340001800b0001006c6f6f6b757000002400028008000200000000010800030000000001070001006d340000080004000000000130000180080001006e617400240002800800010000000001080002000000000208000300000000010800050000000009';
  same(newSlotRule({ table: 't19', chain: 'j', map: 'm4', family: 4, l4proto: 'tcp', mod: 9, dispatch: { kind: 'jhash', field: 'saddr', seed: 5 }, withPort: true }), nft, NFT_MSG.NEWRULE);
});

test('IPv6 data: 16 address bytes, then the port in the next 32-bit register (nat proto_min reg 12)', () => {
  const op = newSlotElements('t', 'm', [{ from: 0, to: 0, address: 'fd00::1:2', port: 8080 }]);
  const data = decodeAttrs(op.payload)[2]?.children?.[0]?.children?.[1]?.children?.[0]?.hex;
  assert.equal(data, 'fd000000000000000000000000010002' + '1f900000');
  const rule = decodeAttrs(newSlotRule({ table: 't', chain: 'c', map: 'm', family: 6, mod: 1, dispatch: { kind: 'numgen' }, withPort: true }).payload);
  const exprs = rule[2]?.children ?? [];
  const nat = exprs[exprs.length - 1]?.children?.[1]?.children ?? [];
  assert.deepEqual(nat.map((n) => [n.type, n.hex]), [[1, '00000001'], [2, '0000000a'], [3, '00000001'], [5, '0000000c']]);
  // No l4proto given: no meta/cmp pair.
  assert.equal(exprs.length, 5);
});

test('a batch: BEGIN, one acked message per command, END; acks decoded by sequence', () => {
  const { bytes, seqs } = encodeBatch([flushChain('t', 'c'), newSlotElements('t', 'm', [{ from: 0, to: 1, address: '10.0.0.1', port: 0 }])], 100);
  assert.deepEqual(seqs, [101, 102]);
  const types: number[] = [];
  for (let off = 0; off < bytes.length; off += bytes.readUInt32LE(off)) types.push(bytes.readUInt16LE(off + 4));
  assert.deepEqual(types, [0x10, (10 << 8) | 8, (10 << 8) | 12, 0x11]);
  // BEGIN names the subsystem in res_id (big-endian 10), as nft's does.
  assert.equal(bytes.subarray(16, 20).toString('hex'), '0000000a');
  const err = (seq: number, errno: number): Buffer => {
    const m = message(NLMSG_ERROR, 0, seq, 0, 0, Buffer.alloc(16));
    m.writeInt32LE(-errno, 16);
    return m;
  };
  assert.deepEqual([...decodeAcks(Buffer.concat([err(101, 0), err(102, 2)]))], [[101, 0], [102, 2]]);
});

test('verdict map elements (svc4, svc6, fwmark4 of table t19 : goto c1): nft\'s NEWSETELEM but the set id', () => {
  // nft 'add element inet t19 svc4 { 10.9.0.100 . tcp . 80 : goto c1, 10.9.0.101 . udp . 53 : goto c1 }', svc6 { fd09::100 . tcp . 8080 : goto c1 }, fwmark4 { 7 : goto c1 }
  const captured: [NftOp[], string][] = [
    [gotoElementOps('t19', 'svc4', [{ key: tupleKey('10.9.0.100', 'tcp', 80), chain: 'c1' }, { key: tupleKey('10.9.0.101', 'udp', 53), chain: 'c1' }]),
      '0100000008000100743139000900020073766334000000000800040000000001640003803000018014000180100001000a0900640600000000500000180002801400028008000100fffffffc07000200633100003000028014000180100001000a0900651100000000350000180002801400028008000100fffffffc0700020063310000'],
    [gotoElementOps('t19', 'svc6', [{ key: tupleKey('fd09::100', 'tcp', 8080), chain: 'c1' }]),
      '0100000008000100743139000900020073766336000000000800040000000002400003803c000180200001801c000100fd090000000000000000000000000100060000001f900000180002801400028008000100fffffffc0700020063310000'],
    [gotoElementOps('t19', 'fwmark4', [{ key: markKey(7), chain: 'c1' }]),
      '0100000008000100743139000c00020066776d61726b340008000400000000032c000380280001800c0001800800010007000000180002801400028008000100fffffffc0700020063310000'],
  ];
  for (const [ops, hex] of captured) {
    assert.equal(ops.length, 1);
    const op = ops[0];
    assert.ok(op !== undefined);
    assert.equal(op.cmd, NFT_MSG.NEWSETELEM);
    assert.equal(op.flags, NLM_F.CREATE);
    assert.deepEqual(decodeAttrs(op.payload), withoutListSetId(decodeAttrs(Buffer.from(hex.slice(8), 'hex'))));
  }
});
