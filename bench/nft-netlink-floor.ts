// The kernel's own cost of one small nf_tables transaction, without nft: one netlink batch that replaces an
// element of a map (delete + add of the same key in one transaction), sent from this process through lvsd's
// own writer and codec. nft re-reads the table into its cache before every command, which is what makes a
// change grow with the table (nft-change.ts prints both); this is the figure a netlink writer starts from.
// MODE "vmap" replaces an element of svc4 (its data a goto: the kernel then re-validates the whole table's
// jump graph at commit); MODE "data" one of the map `probe4` (mark → ipv4_addr), whose data is a value.
// Run inside the director's namespace by nft-change.ts:
//   ip netns exec NS node dist/bench/nft-netlink-floor.js TABLE CHAIN ROUNDS MODE
import { attr, nest } from '../daemon/net/nlattr.js';
import { gotoElementOps, markKey, NFT_MSG, NLM_F, tupleKey, type NftOp } from '../daemon/dataplane/nftables/nl-codec.js';
import { NetfilterSocket } from '../daemon/dataplane/nftables/nl-writer.js';

const [table = 'lvsdbench', chain = '', roundsArg = '21', mode = 'vmap'] = process.argv.slice(2);

/** probe4's element (mark 7 → 10.201.0.1): a value, not a verdict; lvsd itself writes no such map. */
function dataElementOp(): NftOp {
  const element = nest(1, [nest(1, [attr(1, markKey(7))]), nest(2, [attr(1, Buffer.from([10, 201, 0, 1]))])]);
  return { cmd: NFT_MSG.NEWSETELEM, flags: NLM_F.CREATE, payload: Buffer.concat([attr(1, Buffer.from(`${table}\0`)), attr(2, Buffer.from('probe4\0')), nest(3, [element])]) };
}

const add = mode === 'vmap' ? gotoElementOps(table, 'svc4', [{ key: tupleKey('10.250.0.1', 'tcp', 8080), chain }]) : [dataElementOp()];
// The same message as a delete: the kernel finds the element by its key (its data is not compared).
const remove = add.map((op) => ({ ...op, cmd: NFT_MSG.DELSETELEM, flags: 0 }));

const sock = new NetfilterSocket();
const times: number[] = [];
await sock.send(add);
for (let i = 0; i < Number(roundsArg); i++) {
  const t0 = performance.now();
  await sock.send([...remove, ...add]);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ medianMs: times[times.length >> 1], minMs: times[0] })}\n`);
sock.close();
