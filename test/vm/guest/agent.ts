// A minimal lvsd stand-in for VM tests: the IPVS backend in its own process (so it can run inside the
// director's network namespace, and be restarted or killed under traffic).
//   node agent.js DESIRED.json STATE_DIR [graceful|immediate|inhibit] [--stay]
// Applies DESIRED.json and prints one JSON line per apply ({"report": ApplyReport}). With --stay it
// keeps running: SIGHUP re-reads DESIRED.json and applies it, SIGTERM closes (leaving the kernel table).
import { readFileSync } from 'node:fs';
import { createIpvsDataplane } from '../../../daemon/dataplane/ipvs/backend.js';
import type { DrainMode } from '../../../daemon/dataplane/ipvs/drain.js';
import type { DesiredTable } from '../../../daemon/dataplane/types.js';

const [file, stateDir, mode = 'graceful'] = process.argv.slice(2);
const stay = process.argv.includes('--stay');
if (file === undefined || stateDir === undefined) {
  process.stderr.write('usage: agent.js DESIRED.json STATE_DIR [graceful|immediate|inhibit] [--stay]\n');
  process.exit(2);
}
const dp = await createIpvsDataplane({
  stateDir,
  drain: { mode: mode as DrainMode, timeoutMs: Number(process.env.DRAIN_TIMEOUT_MS ?? 4000) },
  drainRecheckMs: 300,
  logger: {
    info: (o, m) => { process.stderr.write(`${JSON.stringify({ level: 'info', msg: m, ...o })}\n`); },
    warn: (o, m) => { process.stderr.write(`${JSON.stringify({ level: 'warn', msg: m, ...o })}\n`); },
    error: (o, m) => { process.stderr.write(`${JSON.stringify({ level: 'error', msg: m, ...o })}\n`); },
  },
});
const applyFile = async (): Promise<void> => {
  const desired = JSON.parse(readFileSync(file, 'utf8')) as DesiredTable;
  const report = await dp.apply(desired);
  process.stdout.write(`${JSON.stringify({ report })}\n`);
};
await applyFile();
if (!stay) {
  await dp.close();
} else {
  process.on('SIGHUP', () => {
    void applyFile();
  });
  process.on('SIGTERM', () => {
    void dp.close().then(() => process.exit(0));
  });
  setInterval(() => undefined, 1 << 30);
}
