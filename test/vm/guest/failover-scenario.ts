// Runs INSIDE the guest: an LVS DR director pair (lvsd ⇄ lvsd, or keepalived ⇄ keepalived as the anchor) with
// the IPVS connection sync daemon, three real servers, a client holding long-lived connections through the
// VIP; the master director's processes are SIGKILLed and the figures of what survived are returned. Shared by
// the guest test (test/vm/guest/failover.ts) and the benchmark (bench/failover-guest.ts).
//
//   client 10.1.0.2 ─┐
//   d1 10.1.0.1 ─────┼── lan 10.1.0.0/24 (VIP 10.1.0.100 on the VRRP master; DR to the real servers' MACs)
//   d2 10.1.0.3 ─────┤   d1/d2 eth1 192.168.77.1/.2 on "sync": the sync daemon's multicast
//   r1..r3 10.1.0.11-13 (VIP on lo, arp_ignore=1, arp_announce=2: what an operator sets up for DR)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from '../../support/netns.js';
import { startRun, type LvsdRun } from '../../support/lvsd-run.js';
import { LVSD_BUNDLE } from '../bundle-path.js';

export type PairKind = 'lvsd' | 'keepalived';

export interface FailoverFigures {
  kind: PairKind;
  total: number;
  /** Long-lived connections still alive (no reset, still answered) at the end. */
  kept: number;
  /** Established connections the backup held (synced) just before the kill. */
  syncedBeforeKill: number;
  /** The longest gap between two answers on any kept connection. */
  longestGapMs: number;
  /** New connections started after the backup took the VIP, and how many of them failed. */
  newAfterTakeover: number;
  newFailedAfterTakeover: number;
  /** New connections started between the kill and the takeover (these may fail: nobody holds the VIP's traffic). */
  newDuringGap: number;
  newFailedDuringGap: number;
  /** Kill → VIP on the backup, as seen by polling (coarse). */
  takeoverMs: number;
  /** After the takeover: when the backup's sync daemon became the master one (-1: not within 60 s). */
  syncMasterAfterMs: number;
  /** What each director's ipvsadm -L --daemon said at the end. */
  daemons: Record<string, string>;
  deadReasons: Record<string, number>;
  /** The backup director's log lines about VRRP and the sync daemon, and its errors (lvsd only). */
  backupLog: string[];
}

const VIP = '10.1.0.100';
const PORT = 7000;
const here = new URL('.', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function lvsdConfig(i: number, dir: string): string {
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
      advertInterval: 1s
      virtualIpaddresses: [${VIP}/24]
virtualServers:
  - address: ${VIP}
    port: ${PORT}
    protocol: tcp
    scheduler: rr
    method: dr
    healthCheck: { type: tcp, interval: 2s, timeout: 1s }
    realServers:
      - { address: 10.1.0.11 }
      - { address: 10.1.0.12 }
      - { address: 10.1.0.13 }
`;
}

function keepalivedConfig(i: number): string {
  const rs = [11, 12, 13].map((n) => `  real_server 10.1.0.${n} ${PORT} {\n    weight 1\n    TCP_CHECK {\n      connect_timeout 1\n    }\n  }`).join('\n');
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
    ${VIP}/24
  }
}
virtual_server ${VIP} ${PORT} {
  delay_loop 2
  lb_algo rr
  lb_kind DR
  protocol TCP
${rs}
}
`;
}

interface Director {
  ns: Netns;
  /** Log lines worth showing when something is off (lvsd: sync, VRRP transitions, errors). */
  notable: () => string[];
  pid: () => number | undefined;
  /** SIGKILL to the director's processes (the main one and its children: the VRRP engine, keepalived's checker). */
  kill: () => Promise<void>;
  stop: () => Promise<void>;
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

function startLvsd(ns: Netns, i: number, dir: string): { director: Director; run: LvsdRun } {
  const conf = join(dir, 'lvsd.yaml');
  writeFileSync(conf, lvsdConfig(i, dir));
  // The one-file bundle: the project share has no page cache in the guest, and lvsd's module graph read file by
  // file from it took minutes under TCG (`lvsd version`: 3 min 24 s).
  const run = startRun(['--config', conf], ['ip', 'netns', 'exec', ns.name], LVSD_BUNDLE);
  const director: Director = {
    ns,
    notable: () => run.lines.filter((l) => /sync|Entering|MASTER/i.test(l.msg) || l.level === 'error').map((l) => `${String(l.time)} ${l.level} ${l.msg}${l.err === undefined ? '' : ` ${JSON.stringify(l.err).slice(0, 300)}`}`),
    pid: () => run.child.pid,
    kill: async () => { if (run.child.pid !== undefined) await killTree(run.child.pid); },
    stop: async () => {
      run.child.kill('SIGTERM');
      await Promise.race([run.exit, sleep(15_000)]);
      if (run.child.exitCode === null && run.child.pid !== undefined) await killTree(run.child.pid);
    },
  };
  return { director, run };
}

function startKeepalived(ns: Netns, i: number, dir: string): Director {
  const conf = join(dir, 'keepalived.conf');
  writeFileSync(conf, keepalivedConfig(i));
  const child: ChildProcess = ns.spawn('keepalived', ['-n', '-l', '-D', '-f', conf, '-p', join(dir, 'k.pid'), '-r', join(dir, 'v.pid'), '-c', join(dir, 'c.pid')]);
  child.stdout?.resume();
  child.stderr?.resume();
  const exit = new Promise<void>((r) => child.once('exit', () => { r(); }));
  return {
    ns,
    notable: () => [],
    pid: () => child.pid,
    kill: async () => { if (child.pid !== undefined) await killTree(child.pid); },
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exit, sleep(15_000)]);
    },
  };
}

async function hasVip(ns: Netns): Promise<boolean> {
  return (await ns.addresses('eth0')).some((a) => a.startsWith(`${VIP}/`));
}

async function waitUntil(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await cond()) return Date.now();
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Established connections to the VIP in a director's IPVS connection table. */
async function establishedTo(ns: Netns): Promise<number> {
  const { stdout } = await ns.exec('ipvsadm', ['-Lnc']);
  return stdout.split('\n').filter((l) => l.includes('ESTABLISHED') && l.includes(`${VIP}:${PORT}`)).length;
}

export interface ScenarioOptions {
  connections?: number;
  intervalMs?: number;
  /** How long the connections run before the kill, and after the takeover. */
  beforeMs?: number;
  afterMs?: number;
  log?: (line: string) => void;
  /** Runs on the directors (namespaces, config files) after the figures, before the topology goes. */
  afterwards?: (directors: { ns: Netns; config: string }[]) => Promise<void>;
}

export async function runFailover(kind: PairKind, opts: ScenarioOptions = {}): Promise<FailoverFigures> {
  const n = opts.connections ?? 30;
  const interval = opts.intervalMs ?? 300;
  const log = opts.log ?? ((): void => undefined);
  const topo = await Topology.create(kind === 'lvsd' ? 'fo-l' : 'fo-k');
  const procs: ChildProcess[] = [];
  const directors: Director[] = [];
  const configs: string[] = [];
  try {
    const client = await topo.addHost({ name: 'client', addresses: ['10.1.0.2/24'] });
    const ds: Netns[] = [];
    for (const [i, addr] of ['10.1.0.1', '10.1.0.3'].entries()) {
      const ns = await topo.addHost({ name: `d${i + 1}`, addresses: [`${addr}/24`] });
      await topo.link(`d${i + 1}`, 'eth1', 'sync', [`192.168.77.${i + 1}/24`]);
      ds.push(ns);
    }
    for (const [i, name] of ['r1', 'r2', 'r3'].entries()) {
      const ns = await topo.addHost({ name, addresses: [`10.1.0.${11 + i}/24`] });
      await ns.sh(
        `ip addr add ${VIP}/32 dev lo && sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2`,
      );
      const echo = ns.spawn('node', [join(here, 'echo-server.js'), name, String(PORT)]);
      procs.push(echo);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => { reject(new Error(`${name}: echo server did not start`)); }, 30_000);
        echo.stdout?.once('data', () => { clearTimeout(t); resolve(); });
      });
    }
    log('topology and real servers up');

    // d1 first, so it is the master when d2 arrives (priority 150 vs 100 would get there anyway).
    for (const [i, ns] of ds.entries()) {
      const dir = mkdtempSync(join(tmpdir(), `fo-${kind}-d${i + 1}-`));
      configs.push(join(dir, kind === 'lvsd' ? 'lvsd.yaml' : 'keepalived.conf'));
      if (kind === 'lvsd') {
        const { director, run } = startLvsd(ns, i, dir);
        directors.push(director);
        let stderr = '';
        run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        try {
          await run.waitFor(/IPVS sync daemon: (backup|master)/, 150_000);
        } catch (e) {
          throw new Error(`d${i + 1}: ${e instanceof Error ? e.message : String(e)}\nexit ${String(run.child.exitCode)}; stderr:\n${stderr.slice(-2000)}`, { cause: e });
        }
      } else {
        directors.push(startKeepalived(ns, i, dir));
      }
    }
    const [d1, d2] = ds as [Netns, Netns];
    await waitUntil('the VIP on d1', () => hasVip(d1), 60_000);
    await waitUntil('the virtual server with three real servers on d2', async () => {
      const { stdout } = await d2.exec('ipvsadm', ['-Ln']);
      return (stdout.match(/-> 10\.1\.0\.1[123]:7000\s+Route/g) ?? []).length === 3;
    }, 60_000);
    await waitUntil('the backup sync daemon on d2 and the master one on d1', async () => {
      const [a, b] = [(await d1.exec('ipvsadm', ['-L', '--daemon'])).stdout, (await d2.exec('ipvsadm', ['-L', '--daemon'])).stdout];
      return /master sync daemon/.test(a) && /backup sync daemon/.test(b);
    }, 60_000);
    log('directors up: d1 master, d2 backup');

    const clientProc = client.spawn('node', [join(here, 'conn-client.js'), VIP, String(PORT), String(n), String(interval), '250']);
    procs.push(clientProc);
    let out = '';
    clientProc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await waitUntil('the client', () => Promise.resolve(out.includes('started')), 30_000);
    await sleep(opts.beforeMs ?? 8000);
    const syncedBeforeKill = await establishedTo(d2);
    log(`backup holds ${syncedBeforeKill} established connections; killing d1's ${kind}`);

    const killAt = Date.now();
    await (directors[0] as Director).kill();
    const takeoverAt = await waitUntil('the VIP on d2', () => hasVip(d2), 60_000);
    log(`d2 took the VIP after ${takeoverAt - killAt} ms`);
    await sleep(opts.afterMs ?? 8000);

    const ended = new Promise<void>((r) => clientProc.once('exit', () => { r(); }));
    clientProc.kill('SIGTERM');
    await Promise.race([ended, sleep(20_000)]);
    const line = out.trim().split('\n').pop() ?? '';
    const result = JSON.parse(line) as { conns: { alive: boolean; dead: string | null; maxGapMs: number }[]; fresh: { at: number; ok: boolean }[] };
    const kept = result.conns.filter((c) => c.alive);
    const after = result.fresh.filter((f) => f.at >= takeoverAt);
    const during = result.fresh.filter((f) => f.at >= killAt && f.at < takeoverAt);
    const deadReasons: Record<string, number> = {};
    for (const c of result.conns) if (!c.alive) deadReasons[c.dead ?? '?'] = (deadReasons[c.dead ?? '?'] ?? 0) + 1;
    // The new master's sync daemon: polled rather than read once, since every process in this guest is slow.
    const masterAt = await waitUntil('the master sync daemon on d2', async () => /master sync daemon/.test((await d2.exec('ipvsadm', ['-L', '--daemon'])).stdout), 60_000).catch(() => -1);
    const daemons: Record<string, string> = {};
    for (const [i, ns] of ds.entries()) daemons[`d${i + 1}`] = (await ns.exec('ipvsadm', ['-L', '--daemon'])).stdout.trim();
    await opts.afterwards?.(ds.map((ns, i) => ({ ns, config: configs[i] ?? '' })));
    return {
      kind,
      total: result.conns.length,
      kept: kept.length,
      syncedBeforeKill,
      longestGapMs: Math.max(0, ...kept.map((c) => c.maxGapMs)),
      newAfterTakeover: after.length,
      newFailedAfterTakeover: after.filter((f) => !f.ok).length,
      newDuringGap: during.length,
      newFailedDuringGap: during.filter((f) => !f.ok).length,
      takeoverMs: takeoverAt - killAt,
      syncMasterAfterMs: masterAt < 0 ? -1 : masterAt - takeoverAt,
      daemons,
      deadReasons,
      backupLog: (directors[1] as Director).notable(),
    };
  } finally {
    for (const d of directors) await d.stop().catch(() => undefined);
    for (const p of procs) p.kill('SIGKILL');
    // Each director namespace has its own IPVS: it goes with the namespace.
    topo.destroy();
  }
}
