// Runs the userspace dataplane in this process, driven by JSON lines on stdin, so tests and benchmarks
// can put it inside the director namespace (`ip netns exec DIR node userspace-runner.js`).
//   → {"id":1,"op":"apply","desired":{…}} | {"id":2,"op":"observe"} | {"id":3,"op":"listeners"}
//   ← {"id":1,"ok":true,"result":…} | {"id":1,"ok":false,"error":"…","name":"UnsupportedByDataplane"}
import { createInterface } from 'node:readline';
import { createUserspaceDataplane, type UserspaceOptions } from '../../daemon/dataplane/userspace/backend.js';
import type { DesiredTable } from '../../daemon/dataplane/types.js';

// proxyProtocolByService: {"tcp:10.9.0.100:8081": 2} becomes the per-service proxyProtocol function.
const raw = JSON.parse(process.argv[2] ?? '{}') as Omit<UserspaceOptions, 'proxyProtocol'> & { proxyProtocolByService?: Record<string, 1 | 2> };
const { proxyProtocolByService: byService, ...rest } = raw;
const opts: UserspaceOptions = byService === undefined ? rest : { ...rest, proxyProtocol: (s) => byService[s.id] };
const dp = createUserspaceDataplane(opts);
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const req = JSON.parse(line) as { id: number; op: string; desired?: DesiredTable };
  const reply = (ok: boolean, body: Record<string, unknown>): void => {
    process.stdout.write(`${JSON.stringify({ id: req.id, ok, ...body })}\n`);
  };
  const work =
    req.op === 'apply' ? dp.apply(req.desired ?? { services: [] })
    : req.op === 'observe' ? dp.observe()
    : Promise.resolve(dp.listeners());
  work.then(
    (result) => {
      reply(true, { result });
    },
    (e: unknown) => {
      reply(false, { error: e instanceof Error ? e.message : String(e), name: e instanceof Error ? e.name : 'Error' });
    },
  );
});
rl.on('close', () => {
  void dp.close().then(() => process.exit(0));
});
process.stderr.write('ready\n');
