// Runs INSIDE the guest: an LVS director pair (lvsd ⇄ lvsd, keepalived ⇄ keepalived as the anchor, or
// keepalived master ⇄ lvsd backup: the migration case) with the IPVS connection sync daemon, three real
// servers, a client holding long-lived connections through the VIP — to one virtual server per forwarding
// method (DR, TUN, NAT: the same directors and real servers, so every step is measured for each at once). Under the same connections the master is
// optionally restarted first (SIGTERM: a graceful stop, the backup takes over; then started again: it adopts
// its kernel table and preempts), then its processes are SIGKILLed; the figures of what survived each step are
// returned. Shared by the guest test (test/vm/guest/failover.ts) and the benchmark (bench/failover-guest.ts).
//
//   client 10.1.0.2 ─┐
//   d1 10.1.0.1 ─────┼── lan 10.1.0.0/24 (VIP 10.1.0.100 on the VRRP master; DR to the real servers' MACs,
//   d2 10.1.0.3 ─────┤   TUN in IPIP to their addresses)
//   r1..r3 10.1.0.11-13  what an operator sets up there: DR: VIP on lo; TUN: VIP on tunl0, rp_filter 0 (ipip
//                        loaded); both: arp_ignore=1, arp_announce=2
//   d1/d2 eth1 192.168.77.1/.2 on "sync": the sync daemon's multicast
//   d1/d2 eth2 10.1.1.1/.3 on "back", gateway VIP 10.1.1.254 on the master (NAT: the directors are the way back)
//   r1..r3 eth1 10.1.1.11-13: the NAT addresses; what leaves from them goes back by the gateway VIP (a rule)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from '../../support/netns.js';
import { startRun, type LvsdRun } from '../../support/lvsd-run.js';
import { LVSD_BUNDLE } from '../bundle-path.js';
import type { Probe, ProbeResult } from './reuse-probe.js';

/** mixed: d1 (the master) runs keepalived with lvs_sync_daemon, d2 (the backup) runs lvsd. */
export type PairKind = 'lvsd' | 'keepalived' | 'mixed';
/** A forwarding method, with its own virtual server on the VIP. */
export type Method = 'dr' | 'tun' | 'nat';
/** What ipvsadm calls each method, the virtual port, and where its real servers are (r1 = n 0). */
export const METHODS: Record<Method, { port: number; fwd: string; rs: (n: number) => string; rsPort: number; lbKind: string }> = {
  dr: { port: 7000, fwd: 'Route', rs: (n) => `10.1.0.${11 + n}`, rsPort: 7000, lbKind: 'DR' },
  tun: { port: 7002, fwd: 'Tunnel', rs: (n) => `10.1.0.${11 + n}`, rsPort: 7002, lbKind: 'TUN' },
  nat: { port: 7003, fwd: 'Masq', rs: (n) => `10.1.1.${11 + n}`, rsPort: 7000, lbKind: 'NAT' },
};

/** What is done to the master, in order, under the same connections. restart = a graceful stop, then a start. */
export type Step = 'restart' | 'kill';

/** A new connection that failed: its start relative to a step's moment (ms; negative: before it), its port,
 * the client's error (timeout: no echo in 3 s), how long the client had tried (ms), when its handshake
 * completed (absent: never — the SYN went unanswered or was refused) and its source port. Where in the step
 * it started and how far it got tell why it failed. */
export interface FailedNew { ms: number; port: number; error: string; triedMs: number; connectMs?: number; localPort?: number }

/** The failed new connections in one line: method, error, start (ms from the step's moment), how far each got. */
export function describeFailed(fs: readonly FailedNew[]): string {
  const method = (port: number): string => (Object.entries(METHODS).find(([, x]) => x.port === port)?.[0] ?? String(port)).toUpperCase();
  return fs.map((f) => `${method(f.port)} ${f.error} at ${f.ms >= 0 ? '+' : ''}${f.ms} ms (${f.connectMs === undefined ? 'never connected' : `connected in ${f.connectMs} ms`}, failed after ${f.triedMs} ms${f.localPort === undefined ? '' : `, source port ${f.localPort}`})`).join('; ');
}

/** One step's window on the client's timeline: from the action to the end of its settle time. */
export interface PhaseFigures {
  name: 'graceful stop' | 'restart';
  /** Long-lived connections that died in this window. */
  lost: number;
  lostReasons: Record<string, number>;
  /** The longest gap between two answers, among gaps that ended in this window. */
  longestGapMs: number;
  /** Action → the VIP on the other director only (graceful stop: d2; restart: d1 again). */
  moveMs: number;
  /** New connections started in the window, and how many of them failed. */
  newTotal: number;
  newFailed: number;
  /** The failed ones by the client's error (timeout: no echo in 3 s), and each one relative to the move
   * (negative: before the VIP moved): where in the step they fail tells why. */
  newFailedReasons: Record<string, number>;
  newFailedAt: FailedNew[];
  /** The longest time the client process itself did not run in the window (ms; over 1 s counted): a
   * starved client sees gaps and timeouts that are not the directors'. */
  clientStallMs: number;
  /** restart only: the virtual server's Conns counter on d1 before the stop and after the restart, and the new
   * connections d1 has surely counted since it took the VIP back (the counter lags up to 2 s: the kernel's
   * estimator). Adopted: after ≥ before + counted. A flushed and re-created service starts again from 0, and
   * before holds at least the 30 long-lived connections. */
  serviceConnsBefore?: number;
  serviceConnsAfter?: number;
  newCountedSinceBack?: number;
}

/** One method's long-lived connections at the end, and its new connections after the takeover. */
export interface MethodFigures { total: number; kept: number; newAfterTakeover: number; newFailedAfterTakeover: number }

export interface FailoverFigures {
  kind: PairKind;
  /** Every method's connections together; `methods` splits them. */
  total: number;
  methods: Partial<Record<Method, MethodFigures>>;
  /** Long-lived connections still alive (no reset, still answered) at the end. */
  kept: number;
  /** Established connections the backup held (synced) just before the kill. */
  syncedBeforeKill: number;
  /** The longest gap between two answers on any connection, among gaps that ended after the kill. */
  longestGapMs: number;
  /** New connections started after the takeover (the backup's gratuitous ARPs heard), and how many of them failed. */
  newAfterTakeover: number;
  newFailedAfterTakeover: number;
  /** New connections started between the kill and the takeover (these may fail: opened through the old
   * master's kernel, then carried on to the new one, which has no entry for them). */
  newDuringGap: number;
  newFailedDuringGap: number;
  /** Every new connection started from the kill on (until r1's crash) that failed, relative to the takeover
   * (negative: in the gap); and the longest time the client itself did not run from the kill on (ms; over
   * 1 s counted: a starved client times out on its own). */
  newFailedAt: FailedNew[];
  clientStallMs: number;
  /** Kill → VIP on the backup, as seen by polling (coarse). */
  takeoverMs: number;
  /** VIP seen on the backup → its gratuitous ARPs heard by the client and (NAT) a real server (-1: not both
   * within the run). "After the takeover" counts from then: before it, traffic still reaches the old master,
   * whose kernel (VIPs, IPVS table) goes on forwarding after its daemon's SIGKILL — a new connection it
   * accepted there and whose next packet goes to the new master after the ARP is reset (measured; docs/ipvs.md). */
  announcedMs: number;
  /** After the takeover: when the backup's sync daemon became the master one (-1: not within 60 s). */
  syncMasterAfterMs: number;
  /** What each director's ipvsadm -L --daemon said at the end. */
  daemons: Record<string, string>;
  deadReasons: Record<string, number>;
  /** The backup director's log lines about VRRP and the sync daemon, and its errors (lvsd only). */
  backupLog: string[];
  /** The steps before the kill (graceful stop and restart), in order. */
  phases: PhaseFigures[];
  /** After the kill (crashRealServer): r1's server process SIGKILLed; the new master's health checks quiesce it. */
  crash?: CrashFigures;
}

export interface CrashFigures {
  /** The crash → r1 at weight 0 in both services of the new master's table. */
  quiesceMs: number;
  /** Long-lived connections that died after the crash (those on r1: its kernel resets them). */
  lostAfterCrash: number;
  /** Long-lived connections r1 answered before its crash, and those on another server that died after it. */
  onCrashed: number;
  lostOthers: number;
  /** New connections started once r1 was quiesced: how many, how many failed, how many r1 answered. */
  newAfterQuiesce: number;
  newFailedAfterQuiesce: number;
  newToCrashed: number;
  /** The persistent service (port 7001, scheduler fo: r1 first) before the crash: who answered the client. */
  persistentBefore: ProbeResult | undefined;
  /** The new master's connection entries for r1's dead connections when the probes start (state counts). */
  entryStates: Record<string, number>;
  /** With expire_nodest_conn and expire_quiescent_template at 0 (the kernel's default, keepalived's): new
   * connections from the source ports of some of r1's dead connections, and one to the persistent service. */
  withoutSysctls: ProbeResult[];
  /** The same with both at 1 (lvsd's): the other dead connections' source ports, and the persistent service. */
  withSysctls: ProbeResult[];
}

const VIP = '10.1.0.100';
const BACK_VIP = '10.1.1.254';
const PORT = METHODS.dr.port;
/** The crash step's persistent service: fo sends a new client to r1 (the highest weight) and keeps it there. */
const PERSISTENT_PORT = 7001;
const here = new URL('.', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function lvsdService(m: Method): string {
  const { port, rs, rsPort } = METHODS[m];
  return `  - address: ${VIP}
    port: ${port}
    protocol: tcp
    scheduler: rr
    method: ${m}
    healthCheck: { type: tcp, interval: 2s, timeout: 1s }
    realServers:
${[0, 1, 2].map((n) => `      - { address: ${rs(n)}${m === 'nat' ? `, port: ${rsPort}` : ''} }`).join('\n')}
`;
}

function lvsdConfig(i: number, dir: string, vrrpVersion: 2 | 3, methods: Method[], persistent: boolean): string {
  return `node: { name: d${i + 1} }
api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }
stateFile: ${join(dir, 'state.json')}
dataplane: ipvs
ipvs:
  syncDaemon: { interface: eth1, syncId: 51 }
vrrp:
  instances:
    - name: VI_1
      interface: eth0
      virtualRouterId: 51
      priority: ${i === 0 ? 150 : 100}
      version: ${vrrpVersion}
      advertInterval: 1s
      virtualIpaddresses: [${VIP}/24${methods.includes('nat') ? `, { address: ${BACK_VIP}/24, dev: eth2 }` : ''}]
virtualServers:
${methods.map(lvsdService).join('')}${persistent ? `  - address: ${VIP}
    port: ${PERSISTENT_PORT}
    protocol: tcp
    scheduler: fo
    method: dr
    persistence: { timeout: 300s }
    inhibitOnFailure: true
    healthCheck: { type: tcp, interval: 2s, timeout: 1s }
    realServers:
      - { address: 10.1.0.11, weight: 3 }
      - { address: 10.1.0.12, weight: 2 }
      - { address: 10.1.0.13, weight: 1 }
` : ''}`;
}

function keepalivedService(m: Method): string {
  const { port, rs, rsPort, lbKind } = METHODS[m];
  const servers = [0, 1, 2].map((n) => `  real_server ${rs(n)} ${rsPort} {\n    weight 1\n    TCP_CHECK {\n      connect_timeout 1\n    }\n  }`).join('\n');
  return `virtual_server ${VIP} ${port} {
  delay_loop 2
  lb_algo rr
  lb_kind ${lbKind}
  protocol TCP
${servers}
}
`;
}

function keepalivedConfig(i: number, methods: Method[]): string {
  return `global_defs {
  router_id kd${i + 1}
  lvs_sync_daemon eth1 inst VI_1 id 51
}
vrrp_instance VI_1 {
  state BACKUP
  interface eth0
  virtual_router_id 51
  priority ${i === 0 ? 150 : 100}
  advert_int 1
  virtual_ipaddress {
    ${VIP}/24${methods.includes('nat') ? `\n    ${BACK_VIP}/24 dev eth2` : ''}
  }
}
${methods.map(keepalivedService).join('')}`;
}

interface Director {
  ns: Netns;
  /** Log lines worth showing when something is off (lvsd: sync, VRRP transitions, errors). */
  notable: () => string[];
  /** Every log line with its time since the process was started (lvsd only): where a slow start spends it. */
  timeline: () => string;
  pid: () => number | undefined;
  /** SIGKILL to the director's processes (the main one and its children: the VRRP engine, keepalived's checker). */
  kill: () => Promise<void>;
  /** SIGTERM, then SIGKILL to what is left after graceMs (default 15 s: the clean-up's). */
  stop: (graceMs?: number) => Promise<void>;
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.trim().split(/\s+/).filter((s) => s !== '').map(Number);
}

/** SIGKILL a process and all its descendants at once (found first, killed together: nobody can respawn). */
async function killTree(pid: number): Promise<void> {
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(await childrenOf(all[i] ?? 0)));
  for (const p of all) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function startLvsd(ns: Netns, i: number, dir: string, vrrpVersion: 2 | 3, methods: Method[], persistent: boolean): { director: Director; run: LvsdRun } {
  const conf = join(dir, 'lvsd.yaml');
  writeFileSync(conf, lvsdConfig(i, dir, vrrpVersion, methods, persistent));
  // The one-file bundle: the project share has no page cache in the guest, and lvsd's module graph read file by
  // file from it took minutes under TCG (`lvsd version`: 3 min 24 s).
  const spawnedAt = Date.now();
  const run = startRun(['--config', conf], ['ip', 'netns', 'exec', ns.name], LVSD_BUNDLE);
  const director: Director = {
    ns,
    timeline: () => `spawned ${new Date(spawnedAt).toISOString()}: ` + run.lines.map((l) => `+${(typeof l.time === 'number' ? l.time : Date.parse(String(l.time))) - spawnedAt} ${l.msg}`).join(' | '),
    notable: () => run.lines.filter((l) => /sync|Entering|MASTER/i.test(l.msg) || l.level === 'error').map((l) => `${String(l.time)} ${l.level} ${l.msg}${l.err === undefined ? '' : ` ${JSON.stringify(l.err).slice(0, 300)}`}`),
    pid: () => run.child.pid,
    kill: async () => { if (run.child.pid !== undefined) await killTree(run.child.pid); },
    stop: async (graceMs = 15_000) => {
      run.child.kill('SIGTERM');
      await Promise.race([run.exit, sleep(graceMs)]);
      if (run.child.exitCode === null && run.child.pid !== undefined) await killTree(run.child.pid);
    },
  };
  return { director, run };
}

function startKeepalived(ns: Netns, i: number, dir: string, methods: Method[]): Director {
  const conf = join(dir, 'keepalived.conf');
  writeFileSync(conf, keepalivedConfig(i, methods));
  const child: ChildProcess = ns.spawn('keepalived', ['-n', '-l', '-D', '-f', conf, '-p', join(dir, 'k.pid'), '-r', join(dir, 'v.pid'), '-c', join(dir, 'c.pid')]);
  child.stdout?.resume();
  child.stderr?.resume();
  const exit = new Promise<void>((r) => child.once('exit', () => { r(); }));
  return {
    ns,
    notable: () => [],
    timeline: () => '',
    pid: () => child.pid,
    kill: async () => { if (child.pid !== undefined) await killTree(child.pid); },
    stop: async (graceMs = 15_000) => {
      child.kill('SIGTERM');
      await Promise.race([exit, sleep(graceMs)]);
    },
  };
}

async function hasVip(ns: Netns): Promise<boolean> {
  return (await ns.addresses('eth0')).some((a) => a.startsWith(`${VIP}/`));
}

/** tcpdump on a host's interface for gratuitous ARPs of `vip`; stop() returns when each was heard (ms, wall clock). */
async function watchGarps(ns: Netns, ifname: string, vip: string): Promise<{ stop: () => Promise<number[]> }> {
  const child = ns.spawn('tcpdump', ['-l', '-n', '-tt', '-i', ifname, 'arp']);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
  // It hears nothing before it says it listens (a cold start in the guest is seconds).
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`tcpdump on ${ifname} did not start`)); }, 120_000);
    child.stderr?.on('data', (d: Buffer) => { if (d.toString().includes('listening on')) { clearTimeout(t); resolve(); } });
    child.once('exit', (code) => { clearTimeout(t); reject(new Error(`tcpdump on ${ifname} exited (${String(code)}): is it installed?`)); });
  });
  const garp = new RegExp(`^(\\d+\\.\\d+) ARP, Request who-has ${vip.replace(/\./g, '\\.')} .*tell ${vip.replace(/\./g, '\\.')},`);
  return {
    stop: () => new Promise((resolve) => {
      child.once('exit', () => {
        resolve(out.split('\n').flatMap((l) => { const m = garp.exec(l); return m === null ? [] : [Math.round(Number(m[1]) * 1000)]; }));
      });
      child.kill('SIGINT');
    }),
  };
}

/** Polls cond until it holds. A poll that fails (an ipvsadm that ran out of time: in a starved TCG guest one has
 * taken over 30 s, blocked in the kernel while a sync daemon stopped) counts as "not yet", not as the end. */
async function waitUntil(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = Date.now();
  let lastError = '';
  while (Date.now() - start < timeoutMs) {
    try {
      if (await cond()) return Date.now();
    } catch (e) {
      lastError = e instanceof Error ? e.message.split('\n')[0] ?? '' : String(e);
    }
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError === '' ? '' : ` (last poll failed: ${lastError})`}`);
}

/** ipvsadm in a director's namespace, with time to spare: a starved guest has taken over 30 s for one. */
const ipvsadm = (ns: Netns, args: string[]): Promise<{ stdout: string }> => ns.exec('ipvsadm', args, { timeoutMs: 120_000 });

/** Established connections to the VIP (any port) in a director's IPVS connection table. */
async function establishedTo(ns: Netns): Promise<number> {
  const { stdout } = await ipvsadm(ns, ['-Lnc']);
  return stdout.split('\n').filter((l) => l.includes('ESTABLISHED') && l.includes(` ${VIP}:`)).length;
}

/** The virtual server's Conns counter (ipvsadm --stats): it lives and dies with the kernel's service. */
async function serviceConns(ns: Netns): Promise<number> {
  const { stdout } = await ipvsadm(ns, ['-Ln', '--stats', '-t', `${VIP}:${PORT}`]);
  const line = stdout.split('\n').find((l) => l.startsWith('TCP'));
  const n = Number(line?.trim().split(/\s+/)[2]);
  if (!Number.isFinite(n)) throw new Error(`no Conns counter for ${VIP}:${PORT} in:\n${stdout}`);
  return n;
}

export interface ScenarioOptions {
  /** The forwarding methods, one virtual server each (default: all three). */
  methods?: Method[];
  /** Before the kill (default: none). */
  steps?: Step[];
  /** After the kill: crash real server r1 (see CrashFigures); lvsd pairs only (it adds the persistent service). */
  crashRealServer?: boolean;
  /** How long each step before the kill lets the connections run once the VIP has moved. */
  settleMs?: number;
  /** Long-lived connections per method (default 30). */
  connections?: number;
  intervalMs?: number;
  /** How long the connections run before the kill, and after the takeover. */
  beforeMs?: number;
  afterMs?: number;
  log?: (line: string) => void;
  /** Runs on the directors (namespaces, config files) after the figures, before the topology goes. */
  afterwards?: (directors: { ns: Netns; config: string }[]) => Promise<void>;
  /** Once a second while the client runs: who holds the VIP and what the client saw (lab/guest-demo.ts). */
  live?: (status: LiveStatus) => void;
  /** When given, the steps and the kill wait for it instead of beforeMs (a key pressed in the lab's demo). */
  killWhen?: Promise<void>;
}

export interface LiveStatus {
  /** Which director holds the VIP. */
  vip: 'd1' | 'd2' | 'both' | 'none';
  /** Long-lived connections alive, of total. */
  alive: number;
  total: number;
  /** In the last second: answers on the long-lived connections, new connections that worked and failed. */
  answers: number;
  newOk: number;
  newFailed: number;
  /** What the scenario is doing. */
  phase: string;
}

type CrashProbes = Pick<CrashFigures, 'persistentBefore' | 'entryStates' | 'withoutSysctls' | 'withSysctls'>;

function crashFigures(result: { conns: { alive: boolean; deadAt: number | null; servers: string[] }[]; fresh: { at: number; ok: boolean; server?: string }[] }, crashAt: number, quiescedAt: number, probes: CrashProbes): CrashFigures {
  const after = result.fresh.filter((f) => f.at >= quiescedAt);
  const lost = result.conns.filter((c) => !c.alive && c.deadAt !== null && c.deadAt >= crashAt);
  return {
    quiesceMs: quiescedAt - crashAt,
    lostAfterCrash: lost.length,
    onCrashed: result.conns.filter((c) => c.servers.includes('r1')).length,
    lostOthers: lost.filter((c) => !c.servers.includes('r1')).length,
    newAfterQuiesce: after.length,
    newFailedAfterQuiesce: after.filter((f) => !f.ok).length,
    newToCrashed: after.filter((f) => f.server === 'r1').length,
    ...probes,
  };
}

/** Runs reuse-probe.js in the client namespace: short connections, some from a given source port. */
async function probe(client: Netns, probes: Probe[]): Promise<ProbeResult[]> {
  const { stdout } = await client.exec('node', [join(here, 'reuse-probe.js'), VIP, JSON.stringify(probes)], { timeoutMs: 120_000 });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as ProbeResult[];
}

const setRemovalSysctls = (ns: Netns, value: 0 | 1): Promise<unknown> =>
  ns.exec('sysctl', ['-qw', `net.ipv4.vs.expire_nodest_conn=${value}`, `net.ipv4.vs.expire_quiescent_template=${value}`]);


/** A new connection as the client reports it (conn-client.ts). */
interface Fresh { at: number; port: number; ok: boolean; ms: number; error?: string; server?: string; connectMs?: number; localPort?: number }

interface Window { name: PhaseFigures['name']; start: number; moved: number; end: number; extra: Partial<PhaseFigures>; counted?: [number, number] }

export async function runFailover(kind: PairKind, opts: ScenarioOptions = {}): Promise<FailoverFigures> {
  const n = opts.connections ?? 30;
  const methods = opts.methods ?? ['dr', 'tun', 'nat'];
  const nat = methods.includes('nat');
  const interval = opts.intervalMs ?? 300;
  const settle = opts.settleMs ?? 6000;
  const log = opts.log ?? ((): void => undefined);
  const topo = await Topology.create(kind === 'lvsd' ? 'fo-l' : kind === 'keepalived' ? 'fo-k' : 'fo-m');
  const procs: ChildProcess[] = [];
  const directors: Director[] = [];
  const dirs: string[] = [];
  const configs: string[] = [];
  const windows: Window[] = [];
  let phase = 'starting';
  let liveTimer: NodeJS.Timeout | undefined;
  // Which program each director runs; the mixed pair speaks VRRP v2 (keepalived's default) on both sides.
  const programOf = (i: number): 'lvsd' | 'keepalived' => (kind === 'mixed' ? (i === 0 ? 'keepalived' : 'lvsd') : kind);
  const vrrpVersion = kind === 'mixed' ? 2 : 3;
  const startDirector = async (ns: Netns, i: number): Promise<Director> => {
    const dir = dirs[i] ?? '';
    if (programOf(i) === 'keepalived') return startKeepalived(ns, i, dir, methods);
    const { director, run } = startLvsd(ns, i, dir, vrrpVersion, methods, opts.crashRealServer === true);
    let stderr = '';
    run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      // A start takes minutes in a loaded TCG guest (see above); a process that exits says so at once.
      await Promise.race([
        run.waitFor(/IPVS sync daemon: (backup|master)/, 600_000),
        run.exit.then((code) => { throw new Error(`lvsd exited (${String(code)}) before its sync daemon ran; its log: ${director.timeline()}`); }),
      ]);
    } catch (e) {
      throw new Error(`d${i + 1}: ${e instanceof Error ? e.message : String(e)}\nexit ${String(run.child.exitCode)}; its log: ${director.timeline()}\nstderr:\n${stderr.slice(-2000)}`, { cause: e });
    }
    return director;
  };
  try {
    const client = await topo.addHost({ name: 'client', addresses: ['10.1.0.2/24'] });
    const ds: Netns[] = [];
    for (const [i, addr] of ['10.1.0.1', '10.1.0.3'].entries()) {
      const ns = await topo.addHost({ name: `d${i + 1}`, addresses: [`${addr}/24`] });
      await topo.link(`d${i + 1}`, 'eth1', 'sync', [`192.168.77.${i + 1}/24`]);
      if (nat) {
        await topo.link(`d${i + 1}`, 'eth2', 'back', [`10.1.1.${2 * i + 1}/24`]);
        await ns.sh('sysctl -qw net.ipv4.ip_forward=1');
      }
      ds.push(ns);
    }
    for (const [i, name] of ['r1', 'r2', 'r3'].entries()) {
      const ns = await topo.addHost({ name, addresses: [`10.1.0.${11 + i}/24`] });
      // What an operator does on a real server; lvsd doctor prints the DR and TUN part.
      const setup = ['sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2'];
      if (methods.includes('dr')) setup.push(`ip addr add ${VIP}/32 dev lo`);
      if (methods.includes('tun')) setup.push(`ip link set tunl0 up && ip addr add ${VIP}/32 dev tunl0 && sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0`);
      if (nat) {
        await topo.link(name, 'eth1', 'back', [`${METHODS.nat.rs(i)}/24`]);
        setup.push(`ip rule add from 10.1.1.0/24 table 100 && ip route add 10.1.1.0/24 dev eth1 table 100 && ip route add default via ${BACK_VIP} table 100`);
      }
      await ns.sh(setup.join(' && '));
      const listen = [...new Set([...methods.map((m) => METHODS[m].rsPort), PERSISTENT_PORT])].join(',');
      const echo = ns.spawn('node', [join(here, 'echo-server.js'), name, listen]);
      procs.push(echo);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => { reject(new Error(`${name}: echo server did not start`)); }, 120_000);
        echo.stdout?.once('data', () => { clearTimeout(t); resolve(); });
      });
    }
    log('topology and real servers up');

    // Both at once: an lvsd start is minutes of CPU in a loaded TCG guest (measured: its first log line after
    // 56 s, the API up after 250 s), and the guest has two vCPUs. d1's priority 150 makes it the master whichever
    // comes up first; settled() waits for that.
    for (const i of ds.keys()) {
      const dir = mkdtempSync(join(tmpdir(), `fo-${kind}-d${i + 1}-`));
      dirs.push(dir);
      configs.push(join(dir, programOf(i) === 'lvsd' ? 'lvsd.yaml' : 'keepalived.conf'));
    }
    const started = await Promise.allSettled(ds.map((ns, i) => startDirector(ns, i)));
    for (const r of started) if (r.status === 'fulfilled') directors.push(r.value);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    const [d1, d2] = ds as [Netns, Netns];
    const settled = async (what: string): Promise<void> => {
      await waitUntil(`the VIP on d1 only (${what})`, async () => (await hasVip(d1)) && !(await hasVip(d2)), 120_000);
      await waitUntil('each virtual server with three real servers on d2', async () => {
        const { stdout } = await ipvsadm(d2, ['-Ln']);
        return methods.every((m) => (stdout.match(new RegExp(`-> 10\\.1\\.[01]\\.1[123]:${METHODS[m].rsPort}\\s+${METHODS[m].fwd}\\s`, 'g')) ?? []).length === 3);
      }, 120_000);
      await waitUntil('the backup sync daemon on d2 and the master one on d1', async () => {
        const [a, b] = [(await ipvsadm(d1, ['-L', '--daemon'])).stdout, (await ipvsadm(d2, ['-L', '--daemon'])).stdout];
        return /master sync daemon/.test(a) && /backup sync daemon/.test(b);
      }, 300_000);
    };
    await settled('start');
    log(`d1's log: ${(directors[0] as Director).timeline()}`);
    log(`directors up: d1 ${programOf(0)} master, d2 ${programOf(1)} backup`);

    const clientProc = client.spawn('node', [join(here, 'conn-client.js'), VIP, methods.map((m) => METHODS[m].port).join(','), String(n), String(interval), '250']);
    procs.push(clientProc);
    let out = '';
    let pending = '';
    let status: Omit<LiveStatus, 'vip' | 'total' | 'phase'> = { alive: 0, answers: 0, newOk: 0, newFailed: 0 };
    /** The client's `dead ID LOCAL_PORT PORT` lines, with when they arrived. */
    const deaths: { at: number; localPort: number; port: number }[] = [];
    clientProc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      pending += d.toString();
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const m = /^dead \d+ (\d+) (\d+)$/.exec(line);
        if (m !== null) deaths.push({ at: Date.now(), localPort: Number(m[1]), port: Number(m[2]) });
        const st = /^status (\d+) (\d+) (\d+) (\d+)$/.exec(line);
        if (st !== null) status = { alive: Number(st[1]), answers: Number(st[2]), newOk: Number(st[3]), newFailed: Number(st[4]) };
      }
    });
    // Generous: a cold node start in a TCG guest on a loaded host has taken more than 30 s.
    await waitUntil('the client', () => Promise.resolve(out.includes('started')), 120_000);
    if (opts.live !== undefined) {
      const live = opts.live;
      liveTimer = setInterval(() => {
        void Promise.all([hasVip(d1).catch(() => false), hasVip(d2).catch(() => false)]).then(([a, b]) => {
          live({ ...status, total: n * methods.length, vip: a && b ? 'both' : a ? 'd1' : b ? 'd2' : 'none', phase });
        });
      }, 1000);
    }
    phase = 'under traffic';
    await (opts.killWhen ?? sleep(opts.beforeMs ?? 8000));

    for (const step of opts.steps ?? []) {
      if (step !== 'restart') continue;
      // A graceful stop of the master: the backup takes the VIP at the priority-0 advert.
      const connsBefore = await serviceConns(d1);
      log(`graceful stop of d1's ${programOf(0)}`);
      phase = `graceful stop of d1's ${programOf(0)}`;
      const stopAt = Date.now();
      // Minutes of grace: a shutdown cut short by SIGKILL leaves the VIP on d1 (a crash, not this step). In a
      // loaded guest lvsd's shutdown has taken longer than 15 s.
      const stopped = (directors[0] as Director).stop(300_000);
      const movedAt = await waitUntil('the VIP on d2 only after the graceful stop', async () => (await hasVip(d2)) && !(await hasVip(d1)), 300_000);
      await stopped;
      await sleep(settle);
      windows.push({ name: 'graceful stop', start: stopAt, moved: movedAt, end: Date.now(), extra: {} });
      // The same director started again over the same state: it adopts its kernel table and takes the VIP back.
      log(`starting d1's ${programOf(0)} again`);
      phase = `d1's ${programOf(0)} starting again`;
      const startAt = Date.now();
      directors[0] = await startDirector(d1, 0);
      const backAt = await waitUntil('the VIP back on d1 only', async () => (await hasVip(d1)) && !(await hasVip(d2)), 300_000);
      await settled('after the restart');
      await sleep(Math.max(settle, 3000));
      const readAt = Date.now();
      const connsAfter = await serviceConns(d1);
      windows.push({ name: 'restart', start: startAt, moved: backAt, end: Date.now(), extra: { serviceConnsBefore: connsBefore, serviceConnsAfter: connsAfter }, counted: [backAt, readAt - 3000] });
      log(`d1 back as master ${backAt - startAt} ms after its start; its log: ${directors[0].timeline()}`);
    }

    const syncedBeforeKill = await establishedTo(d2);
    // Where the new master's gratuitous ARPs land: the client (the VIP) and a real server (the NAT gateway VIP).
    const garps = [await watchGarps(client, 'eth0', VIP), ...(nat ? [await watchGarps(topo.host('r1'), 'eth1', BACK_VIP)] : [])];
    log(`backup holds ${syncedBeforeKill} established connections; killing d1's ${programOf(0)}`);
    const killAt = Date.now();
    phase = `d1's ${programOf(0)} SIGKILLed`;
    await (directors[0] as Director).kill();
    const vipAt = await waitUntil('the VIP on d2', () => hasVip(d2), 60_000);
    log(`d2 took the VIP after ${vipAt - killAt} ms`);
    phase = `d2 took over after ${vipAt - killAt} ms`;
    // The new master's sync daemon, polled from now on beside the traffic (every process in this guest is slow,
    // so one read could miss it); polled only after the run, it would time the run, not the switch.
    const masterPoll = waitUntil('the master sync daemon on d2', async () => /master sync daemon/.test((await ipvsadm(d2, ['-L', '--daemon'])).stdout), 60_000).catch(() => -1);
    await sleep(opts.afterMs ?? 8000);
    const garpAt = (await Promise.all(garps.map((g) => g.stop()))).map((ts) => ts.find((t) => t >= killAt));
    // The takeover as the network sees it: both announcements heard. Until then the client (or the real servers'
    // way back) still points at d1, whose kernel keeps forwarding after its daemon's SIGKILL (see FailoverFigures).
    const takeoverAt = garpAt.every((t) => t !== undefined) ? Math.max(vipAt, ...garpAt) : Infinity;
    log(`gratuitous ARPs heard ${garpAt.map((t) => (t === undefined ? 'never' : `${t - vipAt} ms`)).join(' and ')} after the VIP was seen on d2`);

    let crashAt = Infinity;
    let quiescedAt = Infinity;
    let probes: CrashProbes | undefined;
    if (opts.crashRealServer === true) {
      // The client's persistence template, made on the new master: fo puts it on r1.
      const [persistentBefore] = await probe(client, [{ port: PERSISTENT_PORT }]);
      // r1's echo server dies (the process, not the host: its kernel resets its connections and refuses new ones).
      log(`real server r1 crashes (the persistent service answered from ${String(persistentBefore?.server ?? persistentBefore?.error)})`);
      crashAt = Date.now();
      procs[0]?.kill('SIGKILL');
      // Every service at once: a new connection to any of them must not find r1 at its old weight.
      quiescedAt = await waitUntil('r1 at weight 0 in every service on d2 (or drained and gone; not the inhibited persistent one)', async () => {
        const lines = (await ipvsadm(d2, ['-Ln'])).stdout.split('\n').filter((l) => /-> 10\.1\.[01]\.11:/.test(l));
        return lines.some((l) => l.includes(`:${PERSISTENT_PORT} `)) && lines.every((l) => /\s(Route|Tunnel|Masq)\s+0\s/.test(l));
      }, 60_000).catch(async (e: unknown) => {
        throw new Error(`${e instanceof Error ? e.message : String(e)}; d2 has:\n${(await ipvsadm(d2, ['-Ln'])).stdout}\nd2's log:\n${(directors[1] as Director).notable().slice(-20).join('\n')}`);
      });
      log(`r1 quiesced on d2 ${quiescedAt - crashAt} ms after its crash`);
      // r1's long-lived connections are gone by now (its kernel answered their next line); their source ports
      // still have entries on d2, pointing at r1 at weight 0.
      await sleep(1000);
      const ports = deaths.filter((x) => x.at >= crashAt && x.port === PORT).map((x) => x.localPort);
      const entries = (await ipvsadm(d2, ['-Lnc'])).stdout.split('\n').filter((l) => ports.some((p) => l.includes(`:${p} `)) && l.includes(`10.1.0.11:${PORT}`));
      const entryStates: Record<string, number> = {};
      for (const l of entries) {
        const state = l.trim().split(/\s+/)[2] ?? '?';
        entryStates[state] = (entryStates[state] ?? 0) + 1;
      }
      const half = Math.ceil(ports.length / 2);
      const reuse = (ps: number[]): Probe[] => [...ps.map((localPort) => ({ port: PORT, localPort })), { port: PERSISTENT_PORT }];
      await setRemovalSysctls(d2, 0);
      const withoutSysctls = await probe(client, reuse(ports.slice(0, half)));
      await setRemovalSysctls(d2, 1);
      const withSysctls = await probe(client, reuse(ports.slice(half)));
      probes = { persistentBefore, entryStates, withoutSysctls, withSysctls };
      log(`reuse probes: sysctls 0 ${JSON.stringify(withoutSysctls)}; sysctls 1 ${JSON.stringify(withSysctls)}; entries ${JSON.stringify(entryStates)}`);
      await sleep(3000);
    }

    // 'close', not 'exit': the process can have exited while the end of its report still waits in the pipe
    // (the report is a few hundred KB after a long run; read at 'exit', it was cut short: a JSON error).
    const ended = new Promise<void>((r) => clientProc.once('close', () => { r(); }));
    clientProc.kill('SIGTERM');
    await Promise.race([ended, sleep(180_000)]);
    const line = out.trim().split('\n').pop() ?? '';
    const result = JSON.parse(line) as {
      conns: { port: number; alive: boolean; dead: string | null; deadAt: number | null; maxGapMs: number; servers: string[] }[];
      fresh: Fresh[];
      gaps: { at: number; ms: number }[];
      stalls?: { at: number; ms: number }[];
    };
    // What the crash of r1 did is its own figure: up to the crash, a connection counts as kept.
    const kept = result.conns.filter((c) => c.alive || (c.deadAt !== null && c.deadAt >= crashAt));
    const after = result.fresh.filter((f) => f.at >= takeoverAt && f.at < crashAt);
    const during = result.fresh.filter((f) => f.at >= killAt && f.at < takeoverAt);
    const failedAt = (fs: Fresh[], from: number): FailedNew[] =>
      fs.filter((f) => !f.ok).map((f) => ({ ms: f.at - from, port: f.port, error: f.error ?? '?', triedMs: f.ms, ...(f.connectMs === undefined ? {} : { connectMs: f.connectMs }), ...(f.localPort === undefined ? {} : { localPort: f.localPort }) }));
    const stallIn = (from: number, to: number): number => Math.max(0, ...(result.stalls ?? []).filter((g) => g.at >= from && g.at < to).map((g) => g.ms));
    const reasons = (cs: typeof result.conns): Record<string, number> => {
      const r: Record<string, number> = {};
      for (const c of cs) if (!c.alive) r[c.dead ?? '?'] = (r[c.dead ?? '?'] ?? 0) + 1;
      return r;
    };
    const phases = windows.map((w): PhaseFigures => {
      const lost = result.conns.filter((c) => !c.alive && c.deadAt !== null && c.deadAt >= w.start && c.deadAt < w.end);
      const fresh = result.fresh.filter((f) => f.at >= w.start && f.at < w.end);
      return {
        name: w.name,
        lost: lost.length,
        lostReasons: reasons(lost),
        longestGapMs: Math.max(0, ...result.gaps.filter((g) => g.at >= w.start && g.at < w.end).map((g) => g.ms)),
        moveMs: w.moved - w.start,
        newTotal: fresh.length,
        newFailed: fresh.filter((f) => !f.ok).length,
        newFailedReasons: fresh.filter((f) => !f.ok).reduce<Record<string, number>>((r, f) => ({ ...r, [f.error ?? '?']: (r[f.error ?? '?'] ?? 0) + 1 }), {}),
        newFailedAt: failedAt(fresh, w.moved),
        clientStallMs: stallIn(w.start, w.end),
        ...w.extra,
        ...(w.counted === undefined ? {} : { newCountedSinceBack: result.fresh.filter((f) => f.ok && f.port === PORT && f.at >= (w.counted?.[0] ?? 0) && f.at < (w.counted?.[1] ?? 0)).length }),
      };
    });
    const masterAt = await masterPoll;
    const daemons: Record<string, string> = {};
    for (const [i, ns] of ds.entries()) daemons[`d${i + 1}`] = (await ipvsadm(ns, ['-L', '--daemon'])).stdout.trim();
    await opts.afterwards?.(ds.map((ns, i) => ({ ns, config: configs[i] ?? '' })));
    const byMethod: FailoverFigures['methods'] = {};
    for (const m of methods) {
      const port = METHODS[m].port;
      const fresh = after.filter((f) => f.port === port);
      byMethod[m] = { total: result.conns.filter((c) => c.port === port).length, kept: kept.filter((c) => c.port === port).length, newAfterTakeover: fresh.length, newFailedAfterTakeover: fresh.filter((f) => !f.ok).length };
    }
    return {
      kind,
      total: result.conns.length,
      methods: byMethod,
      kept: kept.length,
      syncedBeforeKill,
      longestGapMs: Math.max(0, ...result.gaps.filter((g) => g.at >= killAt && g.at < crashAt).map((g) => g.ms)),
      newAfterTakeover: after.length,
      newFailedAfterTakeover: after.filter((f) => !f.ok).length,
      newDuringGap: during.length,
      newFailedDuringGap: during.filter((f) => !f.ok).length,
      newFailedAt: failedAt([...during, ...after], takeoverAt === Infinity ? vipAt : takeoverAt),
      clientStallMs: stallIn(killAt, crashAt),
      takeoverMs: vipAt - killAt,
      announcedMs: takeoverAt === Infinity ? -1 : takeoverAt - vipAt,
      syncMasterAfterMs: masterAt < 0 ? -1 : masterAt - vipAt,
      daemons,
      deadReasons: reasons(result.conns.filter((c) => c.deadAt === null || c.deadAt < crashAt)),
      backupLog: (directors[1] as Director).notable(),
      phases,
      ...(probes === undefined ? {} : { crash: crashFigures(result, crashAt, quiescedAt, probes) }),
    };
  } finally {
    clearInterval(liveTimer);
    for (const d of directors) await d.stop().catch(() => undefined);
    for (const p of procs) p.kill('SIGKILL');
    // Each director namespace has its own IPVS: it goes with the namespace.
    topo.destroy();
  }
}
