// A real Director with its two heavy edges faked: a VRRP engine that records reconfigure() calls, and a
// dataplane that records the tables it is handed and refuses non-NAT forwarding like the nftables
// backend. Health checks, the state store and the apply loop are the real ones.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfigText } from '../../daemon/config/load.js';
import type { Config } from '../../daemon/config/types.js';
import { UnsupportedByDataplane, type ApplyReport, type ChangedServices, type Dataplane, type DesiredTable } from '../../daemon/dataplane/types.js';
import { Director, type DirectorOptions } from '../../daemon/director/director.js';
import { openStore } from '../../daemon/state/store.js';
import type { SyncDaemonPort } from '../../daemon/director/vrrp-supervisor.js';
import type { ReconfigureSummary, TransitionEvent, VrrpEngine, VrrpOptions, VrrpSnapshot, VrrpState } from '../../daemon/vrrp/index.js';

/** One VRRP instance and one NAT virtual server: enough for a Director to have every part running. */
export const ONE_OF_EACH = `
dataplane: nftables
api: { listen: 127.0.0.1:9180, socket: /tmp/none.sock }
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, virtualIpaddresses: [192.0.2.10/24] }
virtualServers:
  - { name: web, address: 192.0.2.10, port: 80, method: nat, realServers: [{ address: 10.0.1.11, port: 80 }] }
`;

export function loadConfig(text: string, file = '<inline>'): Config {
  const r = loadConfigText(text, file);
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('\n'));
  return r.config;
}

export class FakeEngine extends EventEmitter implements VrrpEngine {
  readonly reconfigured: VrrpOptions[] = [];
  failNext = false;
  hang = false;
  /** What snapshot() reports; the real engine's snapshot lags a transition it is announcing. */
  reportedState: VrrpState = 'MASTER';
  /** How long reconfigure() takes. */
  reconfigureMs = 0;
  constructor(
    private options: VrrpOptions,
    private readonly onTransition: (e: TransitionEvent) => void = () => undefined,
    private readonly onAnnounced: (instance: string) => void = () => undefined,
  ) {
    super();
  }
  /**
   * A transition as the engine reports it (through the callbacks startVrrp was given); a new MASTER's VIPs
   * and first gratuitous ARPs follow at once unless `announced` is false (then announced() says when).
   */
  transition(instance: string, from: VrrpState, to: VrrpState, announced = true): void {
    this.onTransition({ instance, from, to, reason: 'test', at: Date.now() } as TransitionEvent);
    if (to === 'MASTER' && announced) this.announced(instance);
  }
  announced(instance: string): void {
    this.onAnnounced(instance);
  }
  snapshot(): VrrpSnapshot {
    return {
      at: Date.now(),
      loopDelayMs: { p99: 0, max: 0 },
      instances: this.options.instances.map((i) => ({
        name: i.name, interface: i.interface, vrid: i.vrid, version: 3, family: 4, state: this.reportedState, basePriority: i.priority, priority: i.priority,
        faultReasons: [], advertIntervalMs: 1000, masterAdvertIntervalMs: 1000, sourceAddress: null, masterAddress: null, masterPriority: null,
        vips: i.vips.map((v) => (typeof v === 'string' ? v : v.address)), vipsHeld: true, counters: { advertsSent: 0, advertsReceived: 0, sendErrors: 0, drops: {} }, peers: [],
      })),
    } as unknown as VrrpSnapshot;
  }
  refresh(): Promise<VrrpSnapshot> {
    return this.hang ? new Promise(() => undefined) : Promise.resolve(this.snapshot());
  }
  setPriorityOffset(): void {}
  forceFault(): void {}
  async reconfigure(options: VrrpOptions): Promise<ReconfigureSummary> {
    this.reconfigured.push(options);
    if (this.reconfigureMs > 0) await new Promise((r) => setTimeout(r, this.reconfigureMs));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('VRRP reconfigure failed: interface eth9 does not exist');
    }
    this.options = options;
    return { unchanged: [], updated: options.instances.map((i) => i.name), restarted: [], added: [], removed: [] };
  }
  stopped = false;
  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }
  /** What the real engine does when its process dies unexpectedly. */
  die(how = 'signal SIGKILL'): void {
    this.emit('error', new Error(`VRRP engine process exited (${how})`));
  }
}

/** Refuses non-NAT forwarding before touching anything, as the nftables backend does. */
export class FakeDataplane implements Dataplane {
  readonly kind = 'nftables' as const;
  readonly applied: DesiredTable[] = [];
  /** The changed services each apply was handed beside its table (same index as `applied`). */
  readonly changed: (ChangedServices | undefined)[] = [];
  /** How long an apply takes (a slow kernel, a starved guest). */
  applyMs = 0;
  async apply(desired: DesiredTable, changed?: ChangedServices): Promise<ApplyReport> {
    for (const s of desired.services) {
      for (const rs of s.realServers) if (rs.method !== 'nat') throw new UnsupportedByDataplane('nftables', `${s.id} → ${rs.id}`, 'DR forwarding needs the IPVS dataplane');
    }
    if (this.applyMs > 0) await new Promise((r) => setTimeout(r, this.applyMs));
    this.applied.push(desired);
    this.changed.push(changed);
    return { operations: 1, drift: [], durationMs: 0 };
  }
  observe() {
    return Promise.resolve({ services: [] });
  }
  close() {
    return Promise.resolve();
  }
}

/** Starts a Director on `text` (written to a fresh lvsd.yaml); `cleanup` stops it and removes the files. */
export async function startFakeDirector(text: string, extra: Pick<DirectorOptions, 'vrrpRespawn'> & { sync?: SyncDaemonPort; openDelayMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-director-'));
  const file = join(dir, 'lvsd.yaml');
  writeFileSync(file, text);
  const { store } = await openStore(join(dir, 'state.json'));
  const dataplane = new FakeDataplane();
  const started: { engine?: FakeEngine; all: FakeEngine[] } = { all: [] };
  /** The configs a reload's dataplane part retuned the backend with. */
  const retuned: Config[] = [];
  const { sync = null, openDelayMs = 0, ...options } = extra;
  const d = await Director.start({
    loaded: { config: loadConfig(text, file), text },
    logger: pino({ level: 'silent' }),
    store,
    version: 'test',
    // openDelayMs: a dataplane slow to open (the IPVS probe in an emulated guest takes seconds).
    openDataplane: async () => {
      if (openDelayMs > 0) await new Promise((r) => setTimeout(r, openDelayMs));
      return { dataplane, kind: 'nftables' as const, reason: 'test', sync, retune: (c: Config) => { retuned.push(c); return Promise.resolve(); } };
    },
    startVrrp: (o, _log, events) => {
      started.engine = new FakeEngine(o, events?.transition, events?.announced);
      started.all.push(started.engine);
      return Promise.resolve(started.engine);
    },
    ...options,
  });
  const cleanup = async (): Promise<void> => {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const engine = (): FakeEngine => {
    if (started.engine === undefined) throw new Error('no VRRP engine started: the config has no instances');
    return started.engine;
  };
  return { d, dataplane, engine, engines: started.all, file, retuned, store, cleanup };
}

