// The live HA lab: network namespaces on this host with a client, two directors running lvsd (VRRP
// between them, one VIP in front and one behind), and three real servers running Debian nginx that
// say who they are. `npm start` brings it up; the netns scenario tests drive it.
//
//   client 10.77.0.10 ──┐ front 10.77.0.0/24, VIP 10.77.0.100
//          d1 .1 / d2 .2 ┤
//                        └ back 10.77.1.0/24, gateway VIP 10.77.1.254 ── rs1 .11, rs2 .12, rs3 .13
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Topology, type Netns } from '../test/support/netns.js';
import { startNginx, waitForPort, type NginxHandle } from '../test/support/nginx.js';
import { crashTree } from '../test/support/crash.js';
import { addUser, openStore } from '../daemon/state/store.js';
import { pidFile } from './banner.js';
import { labPeering, type Peering } from './peering.js';
import { relayPanel, type PanelRelay } from './panel-relay.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'daemon', 'cli', 'main.js');

export const LAB = {
  vip: '10.77.0.100',
  backVip: '10.77.1.254',
  client: '10.77.0.10',
  directors: ['10.77.0.1', '10.77.0.2'],
  directorsBack: ['10.77.1.1', '10.77.1.2'],
  realServers: ['10.77.1.11', '10.77.1.12', '10.77.1.13'],
} as const;

export interface LabOptions {
  /** ipvs needs a kernel with ip_vs (lab/options.ts decides for `npm start`). */
  dataplane?: 'ipvs' | 'nftables' | 'userspace';
  /** VRRP v3 advert interval, e.g. "100ms" or "1s". */
  advertInterval?: string;
  /** Host ports on 127.0.0.1 for the two directors' panels (0 = none). */
  apiPorts?: [number, number];
  workDir?: string;
  /** Health-check interval for the real servers. */
  checkInterval?: string;
  /** The directors read each other as one cluster, their APIs on TLS (lab/peering.ts). Default true. */
  peered?: boolean;
}

export interface LabDirector {
  name: string;
  ns: Netns;
  dir: string;
  configPath: string;
  statePath: string;
  apiPort: number;
  /** Its API and cluster parts when the lab is peered, else null (API on the namespace's loopback). */
  peering: Peering | null;
  process: ChildProcess | null;
  exited: Promise<number | null> | null;
}

type ConfigOptions = Required<Omit<LabOptions, 'apiPorts' | 'workDir' | 'peered'>>;

/** A director's config; virtualServers stays the last section, so a test may append a virtual server to it. */
export function directorConfig(i: number, opts: ConfigOptions, dir: string, realServers: readonly string[] = LAB.realServers, peering: Peering | null = null): string {
  const name = `d${i + 1}`;
  const rs = realServers.map((a) => `      - { address: ${a}, port: 80, weight: 1 }`).join('\n');
  return `# lvsd lab director ${name} (written by lab/lab.ts)
node: { name: ${name} }
${peering?.api ?? `api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }`}
stateFile: ${join(dir, 'state.json')}
dataplane: ${opts.dataplane}
nftables: { table: lvsd, masquerade: false }
${peering?.cluster ?? ''}vrrp:
  instances:
    - name: VI_WEB
      interface: eth0
      virtualRouterId: 51
      priority: ${i === 0 ? 150 : 100}
      version: 3
      advertInterval: ${opts.advertInterval}
      virtualIpaddresses:
        - ${LAB.vip}/24
        - { address: ${LAB.backVip}/24, dev: eth1 }
virtualServers:
  - name: web
    address: ${LAB.vip}
    port: 80
    protocol: tcp
    scheduler: rr
    method: nat
    healthCheck:
      type: http
      interval: ${opts.checkInterval}
      timeout: 500ms
      rise: 2
      fall: 2
      http: { path: /health }
    realServers:
${rs}
`;
}

export class Lab {
  readonly directors: LabDirector[] = [];
  readonly realServers: { name: string; ns: Netns; nginx: NginxHandle | null }[] = [];
  client!: Netns;
  adminPassword = randomBytes(9).toString('base64url');
  private readonly relays: PanelRelay[] = [];

  private constructor(
    readonly topo: Topology,
    readonly workDir: string,
    readonly opts: ConfigOptions & { apiPorts: [number, number]; peered: boolean },
  ) {}

  static async up(options: LabOptions = {}): Promise<Lab> {
    const opts = {
      dataplane: options.dataplane ?? 'nftables',
      advertInterval: options.advertInterval ?? '100ms',
      checkInterval: options.checkInterval ?? '1s',
      apiPorts: options.apiPorts ?? ([0, 0] as [number, number]),
      peered: options.peered ?? true,
    };
    const topo = await Topology.create('lab');
    const workDir = options.workDir ?? join('/tmp', topo.id);
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    const lab = new Lab(topo, workDir, opts);
    try {
      await lab.build();
    } catch (e) {
      await lab.down();
      throw e;
    }
    return lab;
  }

  private async build(): Promise<void> {
    const t = this.topo;
    this.client = await t.addHost({ name: 'client', addresses: [`${LAB.client}/24`] });
    const placed = LAB.directors.map((address, i) => ({ name: `d${i + 1}`, address, dir: join(this.workDir, `d${i + 1}`) }));
    for (const p of placed) mkdirSync(p.dir, { recursive: true });
    const peerings = this.opts.peered ? await labPeering(this.workDir, placed) : [];
    for (const [i, addr] of LAB.directors.entries()) {
      const name = `d${i + 1}`;
      const ns = await t.addHost({ name, addresses: [`${addr}/24`] });
      await t.link(name, 'eth1', 'back', [`${LAB.directorsBack[i] ?? ''}/24`]);
      await ns.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0');
      const dir = join(this.workDir, name);
      const peering = peerings[i] ?? null;
      const configPath = join(dir, 'lvsd.yaml');
      writeFileSync(configPath, directorConfig(i, this.opts, dir, LAB.realServers, peering));
      const statePath = join(dir, 'state.json');
      const { store } = await openStore(statePath);
      await addUser(store, 'admin', this.adminPassword, 'admin');
      this.directors.push({ name, ns, dir, configPath, statePath, apiPort: this.opts.apiPorts[i] ?? 0, peering, process: null, exited: null });
    }
    for (const [i, addr] of LAB.realServers.entries()) {
      const name = `rs${i + 1}`;
      const ns = await t.addHost({ name, addresses: [] });
      // Real servers sit on the back segment only, with the floating back VIP as their gateway (LVS-NAT).
      await t.link(name, 'eth1', 'back', [`${addr}/24`]);
      await ns.exec('ip', ['link', 'set', 'eth0', 'down']);
      await ns.exec('ip', ['route', 'add', 'default', 'via', LAB.backVip]);
      this.realServers.push({ name, ns, nginx: await startNginx(ns, { body: name }) });
    }
    for (const d of this.directors) await this.startDirector(d.name);
  }

  director(name: string): LabDirector {
    const d = this.directors.find((x) => x.name === name);
    if (d === undefined) throw new Error(`no director ${name}`);
    return d;
  }

  /** Starts lvsd on a director (its log goes to DIR/lvsd.log) and waits for its API; `env` adds to its environment. */
  async startDirector(name: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
    const d = this.director(name);
    const log = createWriteStream(join(d.dir, 'lvsd.log'), { flags: 'a' });
    const child = d.ns.spawn('node', [CLI, 'run', '--config', d.configPath, '--state', d.statePath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    d.process = child;
    // `ip netns exec` execs the command, so this pid is lvsd's own.
    if (child.pid !== undefined) writeFileSync(pidFile(d), `${String(child.pid)}\n`);
    d.exited = new Promise((res) => child.once('exit', (code) => {
      rmSync(pidFile(d), { force: true });
      res(code);
    }));
    await Promise.race([
      // generous: lvsd starts in ~2 s alone, but 20 s was seen with six helpers sharing two cores
      waitForPort(d.ns, 9180, 60_000),
      d.exited.then((code) => {
        throw new Error(`lvsd on ${name} exited with ${String(code)} at start; see ${join(d.dir, 'lvsd.log')}`);
      }),
    ]);
    if (d.apiPort > 0 && !this.relays.some((r) => r.server.listening && r.server.address() !== null && (r.server.address() as { port: number }).port === d.apiPort)) {
      await this.relay(d);
    }
  }

  /** Graceful stop (SIGTERM: priority-0 advert, VIPs released) or crash (SIGKILL to lvsd and its VRRP engine process). */
  async stopDirector(name: string, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<number | null> {
    const d = this.director(name);
    if (d.process === null || d.exited === null) return null;
    if (signal === 'SIGKILL') crashTree(d.process.pid ?? 0);
    else d.process.kill(signal);
    const code = await d.exited;
    d.process = null;
    d.exited = null;
    return code;
  }

  /** The host side of a director's panel: 127.0.0.1:PORT → unix socket → its API in the namespace (TLS when peered). */
  private async relay(d: LabDirector): Promise<void> {
    const to = d.peering === null ? ['127.0.0.1:9180'] : [d.peering.target, d.peering.ca];
    this.relays.push(await relayPanel(d.ns, join(d.dir, 'api-relay.sock'), d.apiPort, to));
  }

  /** Which director holds the VIP right now (by looking at the interfaces). */
  async vipHolders(): Promise<string[]> {
    const out: string[] = [];
    for (const d of this.directors) {
      const addrs = await d.ns.addresses('eth0');
      if (addrs.includes(`${LAB.vip}/24`)) out.push(d.name);
    }
    return out;
  }

  /** Runs continuous traffic from the client until the returned stop() is called. */
  traffic(concurrency = 4): { stop: () => Promise<TrafficStats> } {
    const child = this.client.spawn('node', [join(ROOT, 'dist', 'lab', 'traffic.js'), `http://${LAB.vip}/`, String(concurrency), '2000']);
    let out = '';
    let err = '';
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    // Stopping before the generator says it is running would kill it before it can print its stats.
    const running = new Promise<void>((res) => {
      child.stderr?.on('data', (b: Buffer) => {
        err += b.toString();
        if (err.includes('running')) res();
      });
      child.once('exit', () => { res(); });
    });
    return {
      stop: async () => {
        await running;
        return new Promise((res, rej) => {
          const done = (code: number | null, signal: NodeJS.Signals | null): void => {
            try {
              res(JSON.parse(out.trim()) as TrafficStats);
            } catch {
              rej(new Error(`traffic generator printed no stats (exit ${String(code ?? signal)}): ${out} ${err}`));
            }
          };
          if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode, child.signalCode);
          else {
            child.once('exit', done);
            child.kill('SIGTERM');
          }
        });
      },
    };
  }

  /** The last `lines` lines of each director's log, for a failing scenario to show what lvsd saw. */
  logTails(lines = 25): string {
    return this.directors.map((d) => {
      let log = '';
      try {
        log = readFileSync(join(d.dir, 'lvsd.log'), 'utf8');
      } catch {
        log = '(no log)';
      }
      return `--- ${d.name}: ${join(d.dir, 'lvsd.log')}\n${log.trimEnd().split('\n').slice(-lines).join('\n')}`;
    }).join('\n');
  }

  async down(): Promise<void> {
    for (const d of this.directors) await this.stopDirector(d.name, 'SIGTERM').catch(() => null);
    for (const r of this.relays) {
      r.server.close();
      r.child.kill('SIGTERM');
    }
    for (const rs of this.realServers) await rs.nginx?.stop();
    this.topo.destroy();
  }
}

export interface TrafficStats {
  sent: number;
  ok: number;
  failed: number;
  longestGapMs: number;
  byServer: Record<string, number>;
  errors: Record<string, number>;
  /** The first 20 failures: when (wall clock, ms), the client port, whether the connection was up. */
  failures: { atMs: number; port: number | null; connected: boolean; error: string }[];
}
