// Entry of the VRRP engine process (forked by channel.ts): owns the runtime and talks to lvsd's main
// process by IPC messages only. It waits for `start`, and dies with its parent: when the IPC channel
// closes (lvsd exited, even by SIGKILL) it stops as on shutdown — priority-0 adverts, VIPs released —
// so no orphan keeps advertising as master.
import { normalizeOptions, type NormalizedOptions } from './options.js';
import { VrrpRuntime } from './runtime.js';
import { hostIo } from './io.js';
import { hostVmacIo, VmacLinks } from './vmac-links.js';
import { native } from '../net/native.js';
import { readIpv4Conf, writeIpv4Conf } from '../net/sysctl.js';
import { PromoteSecondaries } from './promote-secondaries.js';
import type { FromWorker, ToWorker } from './protocol.js';

if (process.send === undefined) throw new Error('daemon/vrrp/engine-process.js runs as lvsd\'s VRRP child process only');

/** How long a stop may take before the process exits anyway (the parent gives it 5 s). */
const STOP_LIMIT_MS = 4000;

const post = (m: FromWorker): void => {
  if (process.connected) process.send?.(m);
};
const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => {
  post({ type: 'log', level, msg, fields });
};

// An uncaught error is reported to the parent before the process dies with it (code 70, EX_SOFTWARE).
process.on('uncaughtException', (e) => {
  const msg = `VRRP engine process crashed: ${e.stack ?? e.message}`;
  process.stderr.write(`${msg}\n`);
  if (process.connected) process.send?.({ type: 'log', level: 'error', msg, fields: {} } satisfies FromWorker, () => process.exit(70));
  else process.exit(70);
});

function setRealtime(priority: number): void {
  try {
    const threads = native().setRealtimeProcess(priority);
    log('info', `VRRP engine process runs SCHED_RR priority ${priority} (all ${threads} threads)`);
  } catch (e) {
    log('warn', `could not get real-time scheduling for the VRRP engine process: ${e instanceof Error ? e.message : String(e)}`);
  }
}

let rt: VrrpRuntime | null = null;
// Virtual MAC interfaces (use_vmac): set up before the instances on them start, removed after they stop.
const vmacs = new VmacLinks(hostVmacIo(), (level, msg, fields) => {
  post({ type: 'log', level, msg, fields });
});
// promote_secondaries on the instances' interfaces: on before they start, put back after they stop.
const promote = new PromoteSecondaries(
  { read: (ifname) => readIpv4Conf(ifname, 'promote_secondaries'), write: (ifname, v) => { writeIpv4Conf(ifname, 'promote_secondaries', v); } },
  (msg) => { log('warn', msg); },
);
let reconfiguring: Promise<void> = Promise.resolve();
/**
 * Requests that came before the runtime was up, handled once it is: the facade's once-a-second snapshot
 * refresh may ask while this process still loads, and its requests are coalesced, so one left unanswered
 * would leave every later snapshot waiting for good.
 */
const early: ToWorker[] = [];
let stopping: Promise<void> | null = null;

function stop(): Promise<void> {
  stopping ??= (async () => {
    const limit = setTimeout(() => process.exit(0), STOP_LIMIT_MS);
    await reconfiguring;
    await rt?.stop();
    promote.sync(null);
    await vmacs.release(null).catch((e: unknown) => {
      log('error', `removing virtual MAC interfaces: ${e instanceof Error ? e.message : String(e)}`);
    });
    vmacs.close();
    clearTimeout(limit);
  })();
  return stopping;
}

async function start(options: NormalizedOptions): Promise<void> {
  if (options.realtimePriority !== undefined) setRealtime(options.realtimePriority);
  let running: NormalizedOptions;
  try {
    running = await vmacs.prepare(options);
  } catch (e) {
    post({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return;
  }
  promote.sync(running);
  // A VMAC or ipvlan whose parent comes late is made then (dynamic_interfaces, always on).
  const io = { ...hostIo((e) => { log('warn', `rtnetlink: ${e.message}`); }), remakeVmac: (name: string) => vmacs.remake(name) };
  rt = new VrrpRuntime(running, io, {
    masterRxLowerPri: (instance, priority) => {
      post({ type: 'rxLowerPri', instance, priority });
    },
    transition: (event) => {
      post({ type: 'transition', event });
    },
    announced: (instance) => {
      post({ type: 'announced', instance });
    },
    log: (level, msg, fields) => {
      post({ type: 'log', level, msg, fields });
    },
  });
  try {
    await rt.start();
    post({ type: 'ready', snapshot: rt.snapshot() });
    for (const m of early.splice(0)) handle(m, rt);
  } catch (e) {
    post({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
}

function onMessage(m: ToWorker, r: VrrpRuntime): void {
  switch (m.type) {
    case 'start':
      break;
    case 'stop':
      void stop().then(() => {
        post({ type: 'stopped' });
        process.disconnect();
      });
      break;
    case 'reconfigure': {
      const id = m.id;
      // One at a time (the facade serializes too); a failure is reported, never thrown away.
      reconfiguring = reconfiguring.then(() =>
        vmacs.prepare(normalizeOptions(m.options)).then((next) => r.reconfigure(next).then(async (summary) => {
          await vmacs.release(next);
          // After the reload: a removed instance has let its VIPs go by now.
          promote.sync(next);
          return summary;
        })).then(
          (summary) => {
            post({ type: 'reconfigured', id, snapshot: r.snapshot(), summary });
          },
          (e: unknown) => {
            post({ type: 'reconfigured', id, snapshot: r.snapshot(), error: e instanceof Error ? e.message : String(e) });
          },
        ),
      );
      break;
    }
    case 'snapshot':
      post({ type: 'snapshot', id: m.id, snapshot: r.snapshot() });
      break;
    case 'track':
      r.track(m.kind, m.name, m.ok, m.value, m.disabled === true);
      break;
    case 'priorityOffset':
      r.setPriorityOffset(m.instance, m.offset);
      break;
    case 'forceFault':
      r.forceFault(m.instance, m.fault);
      break;
  }
}

process.on('message', (raw) => {
  const m = raw as ToWorker;
  try {
    if (m.type === 'start') {
      if (rt === null) void start(normalizeOptions(m.options));
      return;
    }
    if (rt === null) early.push(m);
    else onMessage(m, rt);
  } catch (e) {
    log('error', e instanceof Error ? e.message : String(e), { request: m.type });
  }
});

function handle(m: ToWorker, r: VrrpRuntime): void {
  try {
    onMessage(m, r);
  } catch (e) {
    log('error', e instanceof Error ? e.message : String(e), { request: m.type });
  }
}

// The parent is gone (or asked to stop and closed the channel): stop as on shutdown, then exit.
process.on('disconnect', () => {
  void stop().then(() => process.exit(0));
});

// systemd (KillMode=control-group) and a terminal's Ctrl-C signal the whole group: lvsd's main process
// drives the stop (priority-0 adverts first), so the engine does not die on its own at these.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => undefined);
