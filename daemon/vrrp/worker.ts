// Entry of the VRRP worker thread: owns the runtime and talks to the facade by messages only.
import { parentPort, workerData } from 'node:worker_threads';
import { normalizeOptions, type VrrpOptions } from './options.js';
import { VrrpRuntime } from './runtime.js';
import { hostIo } from './io.js';
import { native } from '../net/native.js';
import type { FromWorker, ToWorker } from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('daemon/vrrp/worker.js runs as a worker thread only');
const post = (m: FromWorker): void => {
  port.postMessage(m);
};

const options = normalizeOptions((workerData as { options: VrrpOptions }).options);
if (options.realtimePriority !== undefined) {
  try {
    native().setRealtime(options.realtimePriority);
    post({ type: 'log', level: 'info', msg: `VRRP thread runs SCHED_RR priority ${options.realtimePriority}`, fields: {} });
  } catch (e) {
    post({ type: 'log', level: 'warn', msg: `could not get real-time scheduling for the VRRP thread: ${e instanceof Error ? e.message : String(e)}`, fields: {} });
  }
}

const rt = new VrrpRuntime(options, hostIo(), {
  transition: (event) => {
    post({ type: 'transition', event });
  },
  log: (level, msg, fields) => {
    post({ type: 'log', level, msg, fields });
  },
});

let reconfiguring: Promise<void> = Promise.resolve();

port.on('message', (m: ToWorker) => {
  try {
    switch (m.type) {
      case 'stop':
        void reconfiguring.then(() => rt.stop()).then(() => {
          post({ type: 'stopped' });
          port.close();
        });
        break;
      case 'reconfigure': {
        const id = m.id;
        // One at a time (the facade serializes too); a failure is reported, never thrown away.
        reconfiguring = reconfiguring.then(() =>
          rt.reconfigure(normalizeOptions(m.options)).then(
            (summary) => {
              post({ type: 'reconfigured', id, snapshot: rt.snapshot(), summary });
            },
            (e: unknown) => {
              post({ type: 'reconfigured', id, snapshot: rt.snapshot(), error: e instanceof Error ? e.message : String(e) });
            },
          ),
        );
        break;
      }
      case 'snapshot':
        post({ type: 'snapshot', id: m.id, snapshot: rt.snapshot() });
        break;
      case 'track':
        rt.track(m.kind, m.name, m.ok, m.value, m.disabled === true);
        break;
      case 'priorityOffset':
        rt.setPriorityOffset(m.instance, m.offset);
        break;
      case 'forceFault':
        rt.forceFault(m.instance, m.fault);
        break;
    }
  } catch (e) {
    post({ type: 'log', level: 'error', msg: e instanceof Error ? e.message : String(e), fields: { request: m.type } });
  }
});

try {
  await rt.start();
  post({ type: 'ready', snapshot: rt.snapshot() });
} catch (e) {
  post({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
}
