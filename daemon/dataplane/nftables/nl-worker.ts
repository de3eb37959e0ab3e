// nl-writer.ts's worker in another network namespace: reads one batch per line on stdin (JSON, payloads in
// base64), sends it over its own NETLINK_NETFILTER socket, answers one line of JSON per batch.
import { createInterface } from 'node:readline';
import { NetfilterSocket, NetlinkBatchError } from './nl-writer.js';
import type { NftOp } from './nl-codec.js';

const sock = new NetfilterSocket();
const lines = createInterface({ input: process.stdin });
let chain: Promise<void> = Promise.resolve();

lines.on('line', (line) => {
  chain = chain.then(async () => {
    let answer: object;
    try {
      const ops = (JSON.parse(line) as { cmd: number; flags: number; payload: string }[]).map((o): NftOp => ({ cmd: o.cmd, flags: o.flags, payload: Buffer.from(o.payload, 'base64') }));
      await sock.send(ops);
      answer = { ok: true };
    } catch (e) {
      answer = e instanceof NetlinkBatchError ? { ok: false, errno: e.errno, index: e.index, message: e.message } : { ok: false, message: String(e) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
});
lines.on('close', () => {
  void chain.then(() => {
    sock.close();
  });
});
