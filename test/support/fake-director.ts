// A director that keeps its world in memory, for the API tests and the panel's e2e. It implements the
// DirectorPort like the real one: reads a YAML config (a subset of the lvsd schema), keeps a "dataplane"
// table of effective weights that overrides, health and failover change, and publishes events.
import { createHash } from 'node:crypto';
import { parseDocument, LineCounter } from 'yaml';
import {
  DirectorRejection,
  type ApplyOptions,
  type ApplyResult,
  type ConfigChange,
  type ConfigCheck,
  type ConfigDiff,
  type ConfigProblem,
  type DirectorPort,
  type RunningConfig,
} from '../../daemon/director/port.js';
import {
  type BgpForceHow,
  type DirectorEvent,
  type DirectorSnapshot,
  type FailoverHow,
  type Override,
  type OverrideTarget,
  type RateCounters,
  type VrrpInstanceSnapshot,
  type VrrpState,
  type VirtualServerSnapshot,
} from '../../daemon/director/snapshot.js';
import { targetKey } from '../../daemon/state/target-key.js';

interface FakeInstance { name: string; interface: string; vrid: number; priority: number; vips: string[] }
interface FakeRealServer { address: string; port: number; weight: number }
interface FakeService { name: string; address: string; port: number; protocol: 'tcp' | 'udp'; scheduler: string; method: 'nat' | 'dr' | 'tun'; quorum: number; realServers: FakeRealServer[] }
interface FakeConfig { node: string; instances: FakeInstance[]; services: FakeService[] }

export const FAKE_CONFIG = `node:
  name: director-1
vrrp:
  instances:
    - name: VI_1
      interface: eth0
      virtualRouterId: 51
      priority: 150
      virtualIpaddresses: [192.168.77.100/24]
    - name: VI_2
      interface: eth1
      virtualRouterId: 52
      priority: 100
      virtualIpaddresses: [192.168.78.100/24]
virtualServers:
  - name: web
    address: 192.168.77.100
    port: 80
    protocol: tcp
    scheduler: wrr
    method: nat
    realServers:
      - { address: 10.0.1.11, port: 80, weight: 10 }
      - { address: 10.0.1.12, port: 80, weight: 10 }
      - { address: 10.0.1.13, port: 80, weight: 5 }
  - name: dns
    address: 192.168.78.100
    port: 53
    protocol: udp
    scheduler: rr
    method: dr
    realServers:
      - { address: 10.0.2.21, port: 53, weight: 1 }
      - { address: 10.0.2.22, port: 53, weight: 1 }
`;

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const serviceId = (s: FakeService): string => `${s.protocol}:${s.address}:${s.port}`;
const rsId = (r: FakeRealServer): string => `${r.address}:${r.port}`;

function str(v: unknown, dflt: string): string {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : dflt;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses the subset of the lvsd config the fake understands; errors carry FILE:LINE:COL like the real loader. */
export function parseFakeConfig(file: string, text: string): { config: FakeConfig | null; errors: ConfigProblem[] } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const errors: ConfigProblem[] = [];
  for (const e of doc.errors) {
    const pos = lc.linePos(e.pos[0]);
    errors.push({ message: `${file}:${pos.line}:${pos.col}: ${e.message.split('\n')[0] ?? ''}`, line: pos.line, column: pos.col });
  }
  if (errors.length > 0) return { config: null, errors };
  const at = (path: (string | number)[], msg: string): void => {
    const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
    const pos = lc.linePos(node?.range?.[0] ?? 0);
    const p = '/' + path.join('/');
    errors.push({ message: `${file}:${pos.line}:${pos.col}: ${p}: ${msg}`, line: pos.line, column: pos.col, path: p });
  };
  const data: unknown = doc.toJS();
  if (!isRecord(data)) return { config: null, errors: [{ message: `${file}:1:1: the config must be a mapping` }] };
  const node = isRecord(data.node) && typeof data.node.name === 'string' ? data.node.name : 'director';
  const instances: FakeInstance[] = [];
  const vrrp = isRecord(data.vrrp) ? data.vrrp : {};
  const rawInstances = Array.isArray(vrrp.instances) ? (vrrp.instances as unknown[]) : [];
  rawInstances.forEach((raw, i) => {
    if (!isRecord(raw)) { at(['vrrp', 'instances', i], 'must be a mapping'); return; }
    const priority = raw.priority ?? 100;
    if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 1 || priority > 255) at(['vrrp', 'instances', i, 'priority'], 'must be an integer 1..255');
    if (typeof raw.name !== 'string') at(['vrrp', 'instances', i], 'name is required');
    instances.push({
      name: String(raw.name),
      interface: str(raw.interface, 'eth0'),
      vrid: Number(raw.virtualRouterId ?? 1),
      priority: Number(priority),
      vips: Array.isArray(raw.virtualIpaddresses) ? raw.virtualIpaddresses.map(String) : [],
    });
  });
  const services: FakeService[] = [];
  const rawServices = Array.isArray(data.virtualServers) ? (data.virtualServers as unknown[]) : [];
  rawServices.forEach((raw, i) => {
    if (!isRecord(raw)) { at(['virtualServers', i], 'must be a mapping'); return; }
    const realServers: FakeRealServer[] = [];
    const rawRs = Array.isArray(raw.realServers) ? (raw.realServers as unknown[]) : [];
    rawRs.forEach((r, j) => {
      if (!isRecord(r)) { at(['virtualServers', i, 'realServers', j], 'must be a mapping'); return; }
      const weight = r.weight ?? 1;
      if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > 65535) at(['virtualServers', i, 'realServers', j, 'weight'], 'must be an integer 0..65535');
      realServers.push({ address: String(r.address), port: Number(r.port ?? raw.port), weight: Number(weight) });
    });
    const protocol = raw.protocol === 'udp' ? 'udp' : 'tcp';
    const method = raw.method === 'dr' || raw.method === 'tun' ? raw.method : 'nat';
    services.push({
      name: str(raw.name, `${protocol}:${String(raw.address)}:${String(raw.port)}`),
      address: String(raw.address),
      port: Number(raw.port),
      protocol,
      scheduler: str(raw.scheduler, 'wlc'),
      method,
      quorum: Number(raw.quorum ?? 1),
      realServers,
    });
  });
  return { config: errors.length > 0 ? null : { node, instances, services }, errors };
}

function diffConfigs(a: FakeConfig, b: FakeConfig): ConfigChange[] {
  const out: ConfigChange[] = [];
  const ia = new Map(a.instances.map((i) => [i.name, i]));
  const ib = new Map(b.instances.map((i) => [i.name, i]));
  for (const [n, i] of ib) {
    const old = ia.get(n);
    if (!old) out.push({ kind: 'instance', change: 'added', name: n });
    else if (JSON.stringify(old) !== JSON.stringify(i)) {
      out.push({ kind: 'instance', change: 'changed', name: n, detail: old.priority !== i.priority ? `priority ${old.priority} → ${i.priority}` : 'settings changed' });
    }
  }
  for (const n of ia.keys()) if (!ib.has(n)) out.push({ kind: 'instance', change: 'removed', name: n });
  const sa = new Map(a.services.map((s) => [serviceId(s), s]));
  const sb = new Map(b.services.map((s) => [serviceId(s), s]));
  for (const [id, s] of sb) {
    const old = sa.get(id);
    if (!old) { out.push({ kind: 'service', change: 'added', name: id }); continue; }
    const ra = new Map(old.realServers.map((r) => [rsId(r), r]));
    const rb = new Map(s.realServers.map((r) => [rsId(r), r]));
    for (const [rid, r] of rb) {
      const o = ra.get(rid);
      if (!o) out.push({ kind: 'realServer', change: 'added', name: `${id}/${rid}` });
      else if (o.weight !== r.weight) out.push({ kind: 'realServer', change: 'changed', name: `${id}/${rid}`, detail: `weight ${o.weight} → ${r.weight}` });
    }
    for (const rid of ra.keys()) if (!rb.has(rid)) out.push({ kind: 'realServer', change: 'removed', name: `${id}/${rid}` });
    if (old.scheduler !== s.scheduler) out.push({ kind: 'service', change: 'changed', name: id, detail: `scheduler ${old.scheduler} → ${s.scheduler}` });
  }
  for (const id of sa.keys()) if (!sb.has(id)) out.push({ kind: 'service', change: 'removed', name: id });
  return out;
}

const zeroRates = (): RateCounters => ({ conns: 0, inPackets: 0, outPackets: 0, inBytes: 0, outBytes: 0, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 });

export interface FakeDirectorOptions {
  configPath?: string;
  configText?: string;
  now?: () => Date;
  /** Overrides loaded from the state store at start, as the real director gets them. */
  overrides?: ReadonlyMap<string, Override>;
}

export class FakeDirector implements DirectorPort {
  readonly configPath: string;
  #text: string;
  #config: FakeConfig;
  #previous: string | null = null;
  #reloads = 0;
  #lastReload: DirectorSnapshot['config']['lastReload'] = null;
  #loadedAt: string;
  readonly #startedAt: string;
  readonly #now: () => Date;
  readonly #listeners = new Set<(e: DirectorEvent) => void>();
  readonly #overrides = new Map<string, Override>();
  /** health by `${service}/${rs}`: false = down */
  readonly #health = new Map<string, boolean>();
  readonly #vrrp = new Map<string, { state: VrrpState; forced: FailoverHow | null; transitions: VrrpInstanceSnapshot['transitions']; sent: number; received: number }>();
  readonly #counters = new Map<string, RateCounters>();
  /** Calls that reached the fake, for tests that check nothing was half-applied. */
  readonly calls: string[] = [];
  /** Prefixes the fake announces over BGP (none: no bgp in the snapshot), and the operator withdrawals. */
  bgpPrefixes: string[] = [];
  readonly #bgpWithdrawn = new Map<string, string>();

  constructor(opts: FakeDirectorOptions = {}) {
    this.#now = opts.now ?? (() => new Date());
    this.configPath = opts.configPath ?? '/etc/lvsd/lvsd.yaml';
    this.#text = opts.configText ?? FAKE_CONFIG;
    const parsed = parseFakeConfig(this.configPath, this.#text);
    if (!parsed.config) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
    this.#config = parsed.config;
    this.#startedAt = this.#iso();
    this.#loadedAt = this.#startedAt;
    for (const [k, v] of opts.overrides ?? []) this.#overrides.set(k, v);
    this.#config.instances.forEach((i, n) => {
      const state: VrrpState = n === 0 ? 'MASTER' : 'BACKUP';
      this.#vrrp.set(i.name, { state, forced: null, transitions: [{ at: this.#startedAt, from: 'INIT', to: state, reason: n === 0 ? 'master down timer expired' : 'higher priority advert from 10.0.0.2' }], sent: 0, received: 0 });
    });
  }

  #iso(): string {
    return this.#now().toISOString();
  }

  #emit(e: DirectorEvent): void {
    for (const fn of this.#listeners) fn(e);
  }

  subscribe(fn: (e: DirectorEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  // ---- the fake's dataplane ----

  /** Effective weight of each real server as the dataplane holds it (absent = out of the table). */
  dataplane(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.#config.services) {
      const sid = serviceId(s);
      const so = this.#overrides.get(sid);
      for (const r of s.realServers) {
        const w = this.#effective(sid, r, so);
        if (w !== null) out.set(`${sid}/${rsId(r)}`, w);
      }
    }
    return out;
  }

  #effective(sid: string, r: FakeRealServer, so: Override | undefined): number | null {
    const key = `${sid}/${rsId(r)}`;
    const o = this.#overrides.get(key);
    if (so?.maintenance === true || o?.maintenance === true) return null;
    if (this.#health.get(key) === false) return null;
    if (so?.drain === true || o?.drain === true) return 0;
    return o?.weight ?? so?.weight ?? r.weight;
  }

  // ---- test levers ----

  /** Simulates a VRRP transition (as a peer's advert or a fault would cause). */
  transition(instance: string, to: VrrpState, reason: string): void {
    const v = this.#vrrp.get(instance);
    if (!v) throw new Error(`no instance ${instance}`);
    const from = v.state;
    v.state = to;
    const at = this.#iso();
    v.transitions.push({ at, from, to, reason });
    if (v.transitions.length > 50) v.transitions.shift();
    this.#emit({ type: 'vrrp.transition', at, instance, from, to, reason });
  }

  /** Simulates a health check result that changes a real server's state. */
  setHealth(service: string, realServer: string, up: boolean, error: string | null = null): void {
    const key = `${service}/${realServer}`;
    this.#health.set(key, up);
    const at = this.#iso();
    this.#emit({ type: 'health.result', at, service, realServer, ok: up, latencyMs: 1.5, result: up ? 'HTTP 200' : 'connect ECONNREFUSED', error });
    this.#emit({ type: 'health.change', at, service, realServer, status: up ? 'up' : 'down', reason: up ? 'rise 2/2' : 'fall 3/3' });
  }

  /** Advances traffic counters as if `seconds` of traffic passed (rates ~ deterministic from the weights). */
  tick(seconds = 1): void {
    for (const s of this.#config.services) {
      for (const r of s.realServers) {
        const key = `${serviceId(s)}/${rsId(r)}`;
        const w = this.dataplane().get(key) ?? 0;
        const c = this.#counters.get(key) ?? zeroRates();
        const cps = w * 3 + Math.round(Math.random() * w);
        c.cps = cps;
        c.conns += cps * seconds;
        c.inPps = cps * 10;
        c.outPps = cps * 12;
        c.inPackets += c.inPps * seconds;
        c.outPackets += c.outPps * seconds;
        c.inBps = cps * 800;
        c.outBps = cps * 12000;
        c.inBytes += c.inBps * seconds;
        c.outBytes += c.outBps * seconds;
        this.#counters.set(key, c);
      }
    }
    for (const v of this.#vrrp.values()) {
      if (v.state === 'MASTER') v.sent += seconds;
      else v.received += seconds;
    }
  }

  // ---- DirectorPort ----

  snapshot(): DirectorSnapshot {
    const dp = this.dataplane();
    const vrrp: VrrpInstanceSnapshot[] = this.#config.instances.map((i) => {
      const v = this.#vrrp.get(i.name) ?? { state: 'INIT' as VrrpState, forced: null, transitions: [], sent: 0, received: 0 };
      const effective = v.forced === 'lower-priority' ? Math.max(1, i.priority - 100) : i.priority;
      return {
        name: i.name,
        interface: i.interface,
        vrid: i.vrid,
        version: 3,
        family: 4,
        state: v.state,
        basePriority: i.priority,
        effectivePriority: effective,
        masterAddress: v.state === 'MASTER' ? '10.0.0.1' : '10.0.0.2',
        vips: i.vips,
        peers: [{ address: '10.0.0.2', priority: 120, lastSeen: this.#iso() }],
        transitions: [...v.transitions],
        adverts: { sent: v.sent, received: v.received, dropped: { auth: 0, ttl: 1 } },
        forced: v.forced === 'restore' ? null : v.forced,
        syncGroup: null,
      };
    });
    const virtualServices: VirtualServerSnapshot[] = this.#config.services.map((s) => {
      const sid = serviceId(s);
      let live = 0;
      const sum = zeroRates();
      const realServers = s.realServers.map((r) => {
        const key = `${sid}/${rsId(r)}`;
        const eff = dp.get(key);
        const up = this.#health.get(key) ?? true;
        if (up) live += r.weight;
        const c = this.#counters.get(key) ?? null;
        if (c) for (const k of Object.keys(sum) as (keyof RateCounters)[]) sum[k] += c[k];
        return {
          id: rsId(r),
          address: r.address,
          port: r.port,
          method: s.method,
          weight: { configured: r.weight, effective: eff ?? null },
          health: {
            status: up ? ('up' as const) : ('down' as const),
            checker: s.protocol === 'tcp' ? 'http' : 'dns',
            since: this.#startedAt,
            lastCheck: { at: this.#iso(), ok: up, latencyMs: 1.5, result: up ? (s.protocol === 'tcp' ? 'HTTP 200' : 'NOERROR 1 answer') : 'connect ECONNREFUSED', error: up ? null : `connect ECONNREFUSED ${rsId(r)}` },
          },
          override: this.#overrides.get(key) ?? null,
          connections: { active: (eff ?? 0) * 4, inactive: (eff ?? 0) * 2 },
          counters: c ? { ...c } : null,
        };
      });
      return {
        id: sid,
        name: s.name,
        protocol: s.protocol,
        address: s.address,
        port: s.port,
        fwmark: null,
        method: s.method,
        scheduler: s.scheduler as VirtualServerSnapshot['scheduler'],
        quorum: { required: s.quorum, liveWeight: live, up: live >= s.quorum, sorryServerActive: false },
        checksSuspended: false,
        override: this.#overrides.get(sid) ?? null,
        counters: this.#counters.size > 0 ? sum : null,
        realServers,
      };
    });
    return {
      node: this.#config.node,
      version: '0.1.0',
      startedAt: this.#startedAt,
      at: this.#iso(),
      dataplane: { kind: 'userspace', reason: 'fake director: no kernel dataplane in tests' },
      vrrp,
      vrrpProblem: null,
      virtualServices,
      ...(this.bgpPrefixes.length === 0 ? {} : {
        bgp: {
          speaker: 'bird' as const, socket: '/run/bird/bird.ctl', problem: null,
          sessions: [{ name: 'upstream', state: 'up', since: this.#startedAt, info: 'Established' }],
          announcements: this.bgpPrefixes.map((prefix) => {
            const by = this.#bgpWithdrawn.get(prefix) ?? null;
            return { prefix, protocol: `lvsd_${prefix.replace(/[^0-9A-Za-z]/g, '_')}`, announced: by === null, reason: by === null ? 'announced: quorum' : `withdrawn by operator ${by}`, withdrawnBy: by };
          }),
        },
      }),
      config: { path: this.configPath, hash: sha(this.#text), loadedAt: this.#loadedAt, reloads: this.#reloads, lastReload: this.#lastReload },
    };
  }

  #mustTarget(t: OverrideTarget): void {
    const s = this.#config.services.find((x) => serviceId(x) === t.service);
    if (!s) throw new DirectorRejection(404, `no virtual server "${t.service}"`);
    if (t.realServer !== undefined && !s.realServers.some((r) => rsId(r) === t.realServer)) {
      throw new DirectorRejection(404, `virtual server "${t.service}" has no real server "${t.realServer}"`);
    }
  }

  setOverride(target: OverrideTarget, override: Override, by: string): Promise<void> {
    this.#mustTarget(target);
    this.calls.push(`setOverride ${targetKey(target)} ${JSON.stringify(override)}`);
    this.#overrides.set(targetKey(target), { ...override });
    this.#emit({ type: 'override', at: this.#iso(), target, override, by });
    return Promise.resolve();
  }

  clearOverride(target: OverrideTarget, by: string): Promise<void> {
    this.#mustTarget(target);
    this.calls.push(`clearOverride ${targetKey(target)}`);
    this.#overrides.delete(targetKey(target));
    this.#emit({ type: 'override', at: this.#iso(), target, override: null, by });
    return Promise.resolve();
  }

  forceFailover(instance: string, how: FailoverHow, by: string): Promise<void> {
    const v = this.#vrrp.get(instance);
    if (!v) return Promise.reject(new DirectorRejection(404, `no VRRP instance "${instance}"`));
    this.calls.push(`forceFailover ${instance} ${how}`);
    v.forced = how === 'restore' ? null : how;
    this.#emit({ type: 'failover', at: this.#iso(), instance, how, by });
    if (how === 'restore') {
      if (v.state !== 'MASTER') this.transition(instance, 'MASTER', 'operator restore: higher priority than peer');
    } else if (v.state === 'MASTER') {
      this.transition(instance, how === 'maintenance' ? 'FAULT' : 'BACKUP', `operator forced failover (${how}) by ${by}`);
    }
    return Promise.resolve();
  }

  forceBgp(prefix: string, how: BgpForceHow, by: string): Promise<void> {
    if (this.bgpPrefixes.length === 0) return Promise.reject(new DirectorRejection(409, 'BGP is not configured (no bgp section in the running config)'));
    if (!this.bgpPrefixes.includes(prefix)) return Promise.reject(new DirectorRejection(404, `prefix ${prefix} is not in bgp.announce`));
    this.calls.push(`forceBgp ${prefix} ${how}`);
    if (how === 'withdraw') this.#bgpWithdrawn.set(prefix, by);
    else this.#bgpWithdrawn.delete(prefix);
    this.#emit({ type: 'bgp.force', at: this.#iso(), prefix, how, by });
    return Promise.resolve();
  }

  validateConfig(text: string): Promise<ConfigCheck> {
    const { errors } = parseFakeConfig(this.configPath, text);
    return Promise.resolve({ ok: errors.length === 0, errors });
  }

  diffConfig(text: string): Promise<ConfigDiff> {
    const { config, errors } = parseFakeConfig(this.configPath, text);
    return Promise.resolve({ ok: config !== null, errors, changes: config ? diffConfigs(this.#config, config) : [] });
  }

  #load(text: string, by: string, what: string): ApplyResult {
    const { config, errors } = parseFakeConfig(this.configPath, text);
    if (!config) return { ok: false, errors, hash: sha(this.#text), changes: [], restartNeeded: [] };
    const changes = diffConfigs(this.#config, config);
    this.#previous = this.#text;
    this.#text = text;
    this.#config = config;
    for (const i of config.instances) {
      if (!this.#vrrp.has(i.name)) this.#vrrp.set(i.name, { state: 'BACKUP', forced: null, transitions: [], sent: 0, received: 0 });
    }
    this.#reloads++;
    const at = this.#iso();
    this.#loadedAt = at;
    const message = `${what}: ${changes.length} change(s)`;
    this.#lastReload = { at, ok: true, message, by, restartNeeded: [] };
    this.calls.push(`${what} ${sha(text).slice(0, 8)}`);
    this.#emit({ type: 'config.reload', at, ok: true, hash: sha(text), by, message });
    return { ok: true, errors: [], hash: sha(text), changes, restartNeeded: [] };
  }

  applyConfig(text: string, by: string, opts: ApplyOptions = {}): Promise<ApplyResult> {
    if (opts.expectedHash !== undefined && opts.expectedHash !== sha(this.#text)) {
      return Promise.reject(new DirectorRejection(409, 'the running config changed since you loaded it; reload the page and apply again'));
    }
    return Promise.resolve(this.#load(text, by, 'apply'));
  }

  /** `lvsd reload`: the fake has no file on disk; it reloads the text it runs. */
  reloadFile(by: string): Promise<ApplyResult> {
    return Promise.resolve(this.#load(this.#text, by, 'reload'));
  }

  rollbackConfig(by: string): Promise<ApplyResult> {
    if (this.#previous === null) return Promise.reject(new DirectorRejection(409, 'no previous good config to roll back to'));
    return Promise.resolve(this.#load(this.#previous, by, 'rollback'));
  }

  runningConfig(): Promise<RunningConfig> {
    return Promise.resolve({ path: this.configPath, hash: sha(this.#text), text: this.#text, canRollback: this.#previous !== null });
  }
}
