// The active-active lab (issue #14): directors behind an ECMP router, each running lvsd (nftables
// dataplane, scheduler mh) and its own BIRD, announcing one VIP over BGP. Everything is real: BIRD 2 on
// the router (kernel protocol with `merge paths`, so one next hop per director that announces), the
// kernel's L4 multipath hash (policy 3 on the 5-tuple), nft on the directors, nginx real servers.
//
//   client 10.70.0.1 ─ front ─ router 10.70.0.254 / 10.71.0.254 ─ core ─ dN 10.71.0.N ─ back ─ rsK 10.72.0.1K
//                                      (BIRD AS 65000)                  (lvsd + BIRD AS 6500N; 10.72.0.N)
//
// The directors masquerade (nftables' default), so a real server answers the director that chose it; nginx
// says who it is and which director it saw at /who ("rs2 10.72.0.3"). Reusable by a demo (`npm start`).
//
// dataplane: 'ipvs' (the QEMU guest) makes it the IPVS picture instead: DR, the VIP on the real servers' lo
// (arp_ignore/arp_announce), the router on the back segment too (10.72.0.254) as the real servers' gateway, so
// replies go straight to the client; every director runs the sync daemon in both roles on eth1 (master with its
// own sync id, backup with id 0: it takes every director's connections). /who then names the client, not the
// director.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from './netns.js';
import { startNginx, type NginxHandle } from './nginx.js';
import { startRun, type LvsdRun } from './lvsd-run.js';

export const ECMP_VIP = '192.0.2.10';
export const ROUTER_CORE = '10.71.0.254';

export interface EcmpLabOptions {
  directors?: number;
  realServers?: number;
  /** BFD between the router and each director (100 ms × 3); without it a dead director is found by the hold timer (3 s). */
  bfd?: boolean;
  /** Start lvsd on the directors (default true; a benchmark of BGP alone may leave it out). */
  lvsd?: boolean;
  /** nftables (masquerade; the host) or ipvs (DR + the sync daemon in both roles; the QEMU guest). */
  dataplane?: 'nftables' | 'ipvs';
  /** ipvs: the sync daemon in both roles on every director (default true; false: a benchmark's control). */
  ipvsSync?: boolean;
  /** The lvsd CLI to run (the guest runs the one-file bundle, test/vm/bundle.ts). */
  lvsdBin?: string;
  /** The virtual servers' ports on the VIP (default [80]), each with every real server on the same port. */
  ports?: number[];
  /** Starts a real server's program instead of nginx on 80 (the guest runs a light echo server). */
  startRealServer?: (host: Netns, name: string) => Promise<{ stop: () => Promise<unknown> }>;
}

export interface EcmpDirector {
  readonly index: number;
  readonly name: string;
  readonly ns: Netns;
  /** Its address on the core segment: the next hop the router installs. */
  readonly core: string;
  /** Its address on the back segment: the source the real servers see. */
  readonly back: string;
  bird: ChildProcess | null;
  lvsd: LvsdRun | null;
}

export interface EcmpLab {
  readonly topo: Topology;
  readonly router: Netns;
  readonly client: Netns;
  readonly directors: EcmpDirector[];
  readonly rsNames: string[];
  readonly dir: string;
  /** The next hops of the VIP's route in the router's kernel table (sorted). */
  nexthops(): Promise<string[]>;
  /** Waits until the router's route has exactly these next hops. */
  waitNexthops(want: readonly string[], timeoutMs?: number): Promise<void>;
  /** Starts the director's BIRD (and lvsd unless lvsd: false), waiting until BIRD answers and lvsd runs. */
  startDirector(d: EcmpDirector, opts?: { lvsd?: boolean }): Promise<void>;
  /** A machine dying: lvsd and BIRD killed, and the director's core link down (no TCP close reaches the router). */
  crash(d: EcmpDirector): Promise<void>;
  /** The director back after a crash: link up, BIRD and lvsd started. */
  revive(d: EcmpDirector): Promise<void>;
  /** SIGTERM to lvsd (graceful: community, drain, withdraw), then BIRD stopped; resolves when lvsd has exited. */
  stopGracefully(d: EcmpDirector): Promise<number | null>;
  destroy(): Promise<void>;
}

// BIRD's defaults wait 5 s before the first connect and 60 s after a session error (a hold timer that ran out).
const TIMERS = 'hold time 3; keepalive time 1; connect retry time 1; connect delay time 1; error wait time 1, 5;';
const BFD = 'protocol bfd { interface "eth0" { min rx interval 100 ms; min tx interval 100 ms; multiplier 3; }; }';

export async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}${last === undefined ? '' : ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})`}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function routerConf(n: number, bfd: boolean): string {
  const peers = Array.from({ length: n }, (_, i) => `protocol bgp d${String(i + 1)} from directors { neighbor 10.71.0.${String(i + 1)} as ${String(65001 + i)}; }`);
  return `router id ${ROUTER_CORE};
protocol device {}
protocol kernel { ipv4 { export all; }; merge paths on; }
${bfd ? BFD : ''}
# RFC 8326: a path with GRACEFUL_SHUTDOWN is least preferred, so it leaves the ECMP set before its withdraw.
filter from_director { if (65535, 0) ~ bgp_community then bgp_local_pref = 0; accept; }
template bgp directors { local ${ROUTER_CORE} as 65000; ${TIMERS} ${bfd ? 'bfd on;' : ''} ipv4 { import filter from_director; export none; }; }
${peers.join('\n')}
`;
}

function directorBirdConf(d: EcmpDirector, fragment: string, bfd: boolean): string {
  return `router id ${d.core};
protocol device {}
${bfd ? BFD : ''}
include "${fragment}";
protocol bgp upstream { local ${d.core} as ${String(65000 + d.index)}; neighbor ${ROUTER_CORE} as 65000; ${TIMERS} ${bfd ? 'bfd on;' : ''}
  ipv4 { import none; export where proto ~ "lvsd_*"; next hop self; }; }
`;
}

interface LabShape { dir: string; rs: string[]; ipvs: boolean; sync: boolean; ports: number[] }

function virtualServer(port: number, lab: LabShape): string {
  return `  - name: web${port === 80 ? '' : String(port)}
    address: ${ECMP_VIP}
    port: ${String(port)}
    protocol: tcp
    scheduler: mh
    method: ${lab.ipvs ? 'dr' : 'nat'}
    quorum: 1
    healthCheck: { type: tcp, interval: ${lab.ipvs ? '1s' : '500ms'}, timeout: 400ms, rise: 1, fall: 1 }
    realServers:
${lab.rs.map((a) => `      - { address: ${a}, port: ${String(port)} }`).join('\n')}
`;
}

function lvsdConf(d: EcmpDirector, lab: LabShape, socket: string, fragment: string): string {
  const sync = `ipvs:
  syncDaemon: { interface: eth1, syncId: ${String(d.index)}, role: both }
`;
  return `
node: { name: ${d.name} }
api: { listen: 127.0.0.1:9180, socket: ${join(lab.dir, `${d.name}-lvsd.sock`)} }
stateFile: ${join(lab.dir, `${d.name}-state.json`)}
dataplane: ${lab.ipvs ? 'ipvs' : 'nftables'}
${lab.ipvs && lab.sync ? sync : ''}bgp:
  socket: ${socket}
  configFile: ${fragment}
  drainOnStop: 2s
  announce:
    - prefix: ${ECMP_VIP}/32
virtualServers:
${lab.ports.map((p) => virtualServer(p, lab)).join('')}`;
}

/** nginx saying who it is and whom it saw at /who ("rs2 10.72.0.3"). */
function whoNginx(host: Netns, name: string): Promise<NginxHandle> {
  return startNginx(host, { body: name, extraServerConfig: `location = /who { default_type text/plain; return 200 "${name} $remote_addr\\n"; }` });
}

export async function createEcmpLab(tag: string, opts: EcmpLabOptions = {}): Promise<EcmpLab> {
  const n = opts.directors ?? 3;
  const bfd = opts.bfd ?? false;
  const ipvs = opts.dataplane === 'ipvs';
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-ecmp-'));
  const topo = await Topology.create(tag);
  const servers: { stop: () => Promise<unknown> }[] = [];
  const directors: EcmpDirector[] = [];
  const routerBirds: ChildProcess[] = [];

  async function spawnBird(ns: Netns, name: string, conf: string): Promise<{ child: ChildProcess; socket: string }> {
    const file = join(dir, `${name}-bird.conf`);
    const socket = join(dir, `${name}-bird.ctl`);
    writeFileSync(file, conf);
    await ns.exec('bird', ['-p', '-c', file]); // parse only: a broken config fails here, with BIRD's message
    const child = ns.spawn('bird', ['-f', '-c', file, '-s', socket]);
    let err = '';
    child.stderr?.on('data', (b: Buffer) => { err += b.toString(); });
    await until(async () => (await ns.exec('birdc', ['-s', socket, 'show', 'status'])).stdout.includes('Daemon is up'), `${name}'s BIRD to answer (stderr: ${err})`);
    return { child, socket };
  }

  const destroy = async (): Promise<void> => {
    for (const d of directors) {
      d.lvsd?.child.kill('SIGKILL');
      d.bird?.kill('SIGKILL');
    }
    for (const b of routerBirds) b.kill('SIGKILL');
    await Promise.all(servers.map((h) => h.stop().catch(() => undefined)));
    topo.destroy();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const router = await topo.addHost({ name: 'router', segment: 'core', addresses: [`${ROUTER_CORE}/24`] });
    await topo.link('router', 'eth1', 'front', ['10.70.0.254/24']);
    // L4 multipath hash: flows (not just client addresses) spread over the next hops. Policy 3 with the five
    // tuple fields (0x37), not policy 1: policy 1 takes a packet's own L4 hash when it has one, and a packet a
    // local TCP socket sent over veth carries the socket's random hash, which TCP changes at every
    // retransmission timeout, so a flow would hop between directors mid-stream (measured in the guest: the
    // router's `ip route get` and the directors' IPVS counters disagreed). A NIC hashes the 5-tuple; so does this.
    await router.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x0037 net.ipv4.conf.all.send_redirects=0');
    // DR: the real servers answer from the VIP through the router, which must not drop that as a spoofed source.
    if (ipvs) {
      await topo.link('router', 'eth2', 'back', ['10.72.0.254/24']);
      await router.sh('sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.eth2.rp_filter=0');
    }
    const client = await topo.addHost({ name: 'client', segment: 'front', addresses: ['10.70.0.1/24'], gateway: '10.70.0.254' });
    const rsNames: string[] = [];
    const rs: string[] = [];
    // Started side by side: each is a process start, slow in the TCG guest.
    const starting: Promise<void>[] = [];
    for (let k = 1; k <= (opts.realServers ?? 3); k++) {
      const name = `rs${String(k)}`;
      const address = `10.72.0.${String(10 + k)}`;
      const host = await topo.addHost({ name, segment: 'back', addresses: [`${address}/24`], ...(ipvs ? { gateway: '10.72.0.254' } : {}) });
      if (ipvs) {
        await host.addAddress('lo', `${ECMP_VIP}/32`);
        await host.sh('sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2');
      }
      const started = (opts.startRealServer ?? whoNginx)(host, name).then((h) => { servers.push(h); });
      started.catch(() => undefined); // handled below, by Promise.all
      starting.push(started);
      rsNames.push(name);
      rs.push(address);
    }
    for (let i = 1; i <= n; i++) {
      const name = `d${String(i)}`;
      const ns = await topo.addHost({ name, segment: 'core', addresses: [`10.71.0.${String(i)}/24`], gateway: ROUTER_CORE });
      await topo.link(name, 'eth1', 'back', [`10.72.0.${String(i)}/24`]);
      await ns.addAddress('lo', `${ECMP_VIP}/32`);
      await ns.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0');
      directors.push({ index: i, name, ns, core: `10.71.0.${String(i)}`, back: `10.72.0.${String(i)}`, bird: null, lvsd: null });
    }
    await Promise.all(starting);
    routerBirds.push((await spawnBird(router, 'router', routerConf(n, bfd))).child);

    const nexthops = async (): Promise<string[]> => {
      const { stdout } = await router.exec('ip', ['-j', 'route', 'show', `${ECMP_VIP}/32`]);
      const routes = JSON.parse(stdout === '' ? '[]' : stdout) as { gateway?: string; nexthops?: { gateway: string }[] }[];
      const r = routes[0];
      if (r === undefined) return [];
      return (r.nexthops?.map((h) => h.gateway) ?? (r.gateway === undefined ? [] : [r.gateway])).sort();
    };

    const startDirector = async (d: EcmpDirector, o: { lvsd?: boolean } = {}): Promise<void> => {
      const fragment = join(dir, `${d.name}-lvsd-bird.conf`);
      writeFileSync(fragment, '');
      const bird = await spawnBird(d.ns, d.name, directorBirdConf(d, fragment, bfd));
      d.bird = bird.child;
      if (!(o.lvsd ?? opts.lvsd ?? true)) return;
      const cfg = join(dir, `${d.name}-lvsd.yaml`);
      writeFileSync(cfg, lvsdConf(d, { dir, rs, ipvs, sync: opts.ipvsSync ?? true, ports: opts.ports ?? [80] }, bird.socket, fragment));
      d.lvsd = startRun(['--config', cfg, '--state', join(dir, `${d.name}-state.json`)], ['ip', 'netns', 'exec', d.ns.name], opts.lvsdBin);
      // Generous: on a loaded 2-core machine three lvsd starting at once took up to ~30 s. In the TCG guest the
      // API's start takes minutes more: there the director is ready once it has told BIRD what to announce.
      await d.lvsd.waitFor(ipvs ? /^bgp: announcing/ : /^running$/, ipvs ? 300_000 : 120_000);
    };

    const killed = async (c: ChildProcess | null): Promise<void> => {
      if (c === null || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    };

    const lab: EcmpLab = {
      topo, router, client, directors, rsNames, dir, nexthops,
      waitNexthops: (want, timeoutMs = 30_000) =>
        until(async () => JSON.stringify(await nexthops()) === JSON.stringify([...want].sort()), `the router's next hops for ${ECMP_VIP} to be [${want.join(', ')}]`, timeoutMs),
      startDirector,
      crash: async (d) => {
        await topo.setLink(d.name, 'eth0', false);
        await Promise.all([killed(d.lvsd?.child ?? null), killed(d.bird)]);
        d.lvsd = null;
        d.bird = null;
      },
      revive: async (d) => {
        await topo.setLink(d.name, 'eth0', true);
        await d.ns.exec('ip', ['route', 'replace', 'default', 'via', ROUTER_CORE]);
        await startDirector(d);
      },
      stopGracefully: async (d) => {
        const run = d.lvsd;
        d.lvsd = null;
        let code: number | null = null;
        if (run !== null) {
          run.child.kill('SIGTERM');
          code = await run.exit;
        }
        await killed(d.bird);
        d.bird = null;
        return code;
      },
      destroy,
    };
    return lab;
  } catch (e) {
    await destroy();
    throw e;
  }
}
