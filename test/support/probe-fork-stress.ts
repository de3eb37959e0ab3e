// Run by test/unit/health-native-probe.test.ts in a process of its own, so that a crash is a failed
// test rather than a dead test runner: the native engine runs HTTP checks back to back against a
// loopback server while Node forks a child every 3 ms, as lvsd forks nft, notify hooks and exec checks
// beside its probes. Runs at least `ms`, and on until 1,000 checks and 50 forks have happened (a loaded machine
// gets there later; 60 s at most). Prints one JSON line {checks, spawns, failed} and exits 0 if it survived.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { NativeProbeEngine, nativeSpecFor, probeAddon } from '../../daemon/health/native-probe.js';
import { CHECK_DEFAULTS } from '../../daemon/health/options.js';

const ms = Number(process.argv[2] ?? 1500);
const lib = probeAddon();
if (lib === null) throw new Error('native probe engine not built');
const server = createServer((c) => {
  c.on('error', () => undefined);
  c.resume();
  c.end('HTTP/1.0 200 OK\r\n\r\n');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const address = server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;

const BATCH = 50;
let checks = 0;
let failed = 0;
let inFlight = 0;
const spec = nativeSpecFor('stress', '127.0.0.1', port, { ...CHECK_DEFAULTS, type: 'http', timeoutMs: 2000 });
if (spec === undefined) throw new Error('the engine does not take a plain HTTP check');
const engine = new NativeProbeEngine(lib, (_token, _gen, verdict) => {
  checks++;
  if (verdict?.ok !== true) failed++;
  if (--inFlight === 0) kick();
});
const id = engine.add(spec);
function kick(): void {
  inFlight = BATCH;
  for (let i = 0; i < BATCH; i++) engine.start(id, i, 0);
}
kick();

let spawns = 0;
const forks = setInterval(() => {
  spawn('true', { stdio: 'ignore' }).on('exit', () => spawns++);
}, 3);
const startedAt = Date.now();
const done = setInterval(() => {
  const enough = checks > 1000 && spawns > 50;
  if (Date.now() - startedAt < ms || (!enough && Date.now() - startedAt < 60_000)) return;
  clearInterval(done);
  clearInterval(forks);
  engine.close();
  server.close();
  console.log(JSON.stringify({ checks, spawns, failed }));
  process.exit(0);
}, 50);
