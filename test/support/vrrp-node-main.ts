// A process that runs lvsd's VRRP engine with options from argv[2] (JSON), for tests and benchmarks
// that need it inside a network namespace. Prints JSON lines on stdout ({kind: 'transition' | 'log' |
// 'snapshot' | 'ready' | 'stopped'}); reads commands on stdin ("snapshot", "offset NAME N",
// "fault NAME 0|1", "block MS" to busy-wait the main thread, "reconfigure JSON" as a reload does); SIGTERM = graceful stop, SIGKILL = crash.
import { createInterface } from 'node:readline';
import { startVrrp, type VrrpLogger } from '../../daemon/vrrp/index.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';

const out = (o: Record<string, unknown>): void => {
  process.stdout.write(JSON.stringify(o) + '\n');
};
const mk =
  (level: string) =>
  (fields: Record<string, unknown>, msg: string): void => {
    out({ kind: 'log', level, msg, ...fields });
  };
const logger: VrrpLogger = { debug: mk('debug'), info: mk('info'), warn: mk('warn'), error: mk('error') };

const options = JSON.parse(process.argv[2] ?? '{}') as VrrpOptions;
const vrrp = await startVrrp(options, logger, {
  transition: (e) => {
    out({ kind: 'transition', ...e, mono: performance.timeOrigin + performance.now() });
  },
});
vrrp.on('notify', (e) => {
  out({ kind: 'notify', object: e.object, ...e.result });
});
out({ kind: 'ready', snapshot: vrrp.snapshot() });

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void vrrp.stop().then(() => {
    out({ kind: 'stopped' });
    process.exit(0);
  });
});

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, a, b] = line.trim().split(/\s+/);
  if (cmd === 'snapshot') void vrrp.refresh().then((s) => { out({ kind: 'snapshot', snapshot: s }); });
  else if (cmd === 'offset' && a !== undefined) vrrp.setPriorityOffset(a, Number(b));
  else if (cmd === 'fault' && a !== undefined) vrrp.forceFault(a, b === '1');
  else if (cmd === 'reconfigure') {
    const next = JSON.parse(line.trim().slice('reconfigure'.length)) as VrrpOptions;
    vrrp.reconfigure(next).then(
      (summary) => { out({ kind: 'reconfigured', summary }); },
      (e: unknown) => { out({ kind: 'reconfigured', error: String(e) }); },
    );
  } else if (cmd === 'block') {
    // Simulates a busy main thread (a slow request, a GC pause, 10,000 health checks): the VRRP
    // worker must not notice.
    const end = performance.now() + Number(a);
    while (performance.now() < end) {
      /* busy */
    }
  }
});
