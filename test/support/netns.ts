// Network namespaces for integration tests: hosts joined by a bridge that lives in its own "switch"
// namespace, so nothing in the machine's own network is touched. Every name carries this process's
// id, so concurrent test files never collide, and destroy() (or process exit) removes everything.
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
let counter = 0;
const live = new Set<string>();

process.on('exit', () => {
  for (const ns of live) killAndDelete(ns);
});

function killAndDelete(ns: string): void {
  try {
    const pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  } catch {
    /* namespace already gone */
  }
  try {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  } catch {
    /* already gone */
  }
  live.delete(ns);
}

export interface ExecResult {
  stdout: string;
  stderr: string;
}

/** One network namespace: a host of the test topology. */
export class Netns {
  constructor(readonly name: string) {}

  /** Runs a command inside the namespace and returns its output; rejects on a non-zero exit. */
  async exec(cmd: string, args: string[] = [], opts: { timeoutMs?: number; input?: string } = {}): Promise<ExecResult> {
    const child = run('ip', ['netns', 'exec', this.name, cmd, ...args], {
      timeout: opts.timeoutMs ?? 30_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (opts.input !== undefined) {
      child.child.stdin?.end(opts.input);
    }
    const { stdout, stderr } = await child;
    return { stdout, stderr };
  }

  /** Shell one-liner inside the namespace. */
  sh(script: string, timeoutMs?: number): Promise<ExecResult> {
    return this.exec('sh', ['-c', script], timeoutMs === undefined ? {} : { timeoutMs });
  }

  /** Starts a long-running process inside the namespace. It dies with the namespace. */
  spawn(cmd: string, args: string[] = [], opts: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.name, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  }

  /** Adds an address (CIDR) to an interface of this namespace. */
  async addAddress(ifname: string, cidr: string): Promise<void> {
    await run('ip', ['-n', this.name, 'addr', 'add', cidr, 'dev', ifname, ...(cidr.includes(':') ? ['nodad'] : [])]);
  }

  /** Addresses on an interface, as "a.b.c.d/nn" strings. */
  async addresses(ifname: string): Promise<string[]> {
    const { stdout } = await run('ip', ['-n', this.name, '-j', 'addr', 'show', 'dev', ifname]);
    const parsed = JSON.parse(stdout) as { addr_info?: { local: string; prefixlen: number }[] }[];
    return parsed.flatMap((l) => (l.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`));
  }
}

export interface HostSpec {
  /** Short host name, unique in the topology (e.g. "d1", "rs1", "client"). */
  name: string;
  /** CIDR addresses for eth0, e.g. ["10.0.0.1/24", "fd00::1/64"]. */
  addresses?: string[];
  /** Default route via this gateway, if any. */
  gateway?: string;
  /** The segment eth0 joins (default "lan"). */
  segment?: string;
}

/**
 * A set of hosts on one (or more) switched segments. Hosts get eth0 on segment "lan" unless
 * link() adds more interfaces. Segments are Linux bridges in a private switch namespace.
 */
export class Topology {
  readonly id: string;
  readonly hosts = new Map<string, Netns>();
  private readonly switchNs: Netns;
  private readonly segments = new Set<string>();
  private nextPort = 0;

  private constructor(tag: string) {
    this.id = `lvt-${tag}-${process.pid}-${counter++}`;
    this.switchNs = new Netns(`${this.id}-sw`);
  }

  static async create(tag: string): Promise<Topology> {
    const t = new Topology(tag.slice(0, 8));
    await t.addNamespace(t.switchNs);
    return t;
  }

  private async addNamespace(ns: Netns): Promise<void> {
    await run('ip', ['netns', 'add', ns.name]);
    live.add(ns.name);
    await run('ip', ['-n', ns.name, 'link', 'set', 'lo', 'up']);
    // New namespaces start with rp_filter 0 and IPv6 DAD on; DAD would delay addresses by ~1 s.
    await ns.sh('sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 net.ipv4.tcp_timestamps=2 || true');
  }

  private async segment(name: string): Promise<string> {
    const br = `br-${name}`.slice(0, 15);
    if (!this.segments.has(name)) {
      await run('ip', ['-n', this.switchNs.name, 'link', 'add', br, 'type', 'bridge', 'mcast_snooping', '0', 'stp_state', '0', 'forward_delay', '0']);
      await run('ip', ['-n', this.switchNs.name, 'link', 'set', br, 'up']);
      this.segments.add(name);
    }
    return br;
  }

  /** Adds a host with eth0 on the "lan" segment (or spec.segment). */
  async addHost(spec: HostSpec): Promise<Netns> {
    const ns = new Netns(`${this.id}-${spec.name}`);
    await this.addNamespace(ns);
    this.hosts.set(spec.name, ns);
    await this.link(spec.name, 'eth0', spec.segment ?? 'lan', spec.addresses ?? []);
    if (spec.gateway !== undefined) {
      await run('ip', ['-n', ns.name, 'route', 'add', 'default', 'via', spec.gateway]);
    }
    return ns;
  }

  /** Gives an existing host another interface on a (possibly new) segment. */
  async link(host: string, ifname: string, segmentName: string, addresses: string[] = []): Promise<void> {
    const ns = this.host(host);
    const br = await this.segment(segmentName);
    const port = `p${this.nextPort++}`;
    await run('ip', ['link', 'add', ifname, 'netns', ns.name, 'type', 'veth', 'peer', 'name', port, 'netns', this.switchNs.name]);
    await run('ip', ['-n', this.switchNs.name, 'link', 'set', port, 'master', br, 'up']);
    await run('ip', ['-n', ns.name, 'link', 'set', ifname, 'up']);
    for (const a of addresses) await ns.addAddress(ifname, a);
  }

  host(name: string): Netns {
    const ns = this.hosts.get(name);
    if (ns === undefined) throw new Error(`no host ${name} in topology ${this.id}`);
    return ns;
  }

  /** Brings a host's interface down or up (for link-tracking tests). */
  async setLink(host: string, ifname: string, up: boolean): Promise<void> {
    await run('ip', ['-n', this.host(host).name, 'link', 'set', ifname, up ? 'up' : 'down']);
  }

  /** Runs a capture (tcpdump) inside a host namespace; stop() returns the decoded lines. */
  capture(host: string, ifname: string, filter: string): { stop: () => Promise<string> } {
    const child = this.host(host).spawn('tcpdump', ['-l', '-n', '-e', '-xx', '-i', ifname, filter]);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    return {
      stop: () =>
        new Promise((resolve) => {
          child.once('exit', () => { resolve(out); });
          child.kill('SIGINT');
        }),
    };
  }

  destroy(): void {
    for (const ns of this.hosts.values()) killAndDelete(ns.name);
    killAndDelete(this.switchNs.name);
    this.hosts.clear();
  }
}

/** Removes namespaces left behind by test runs that were killed (names start with "lvt-"). */
export function removeStaleNamespaces(): void {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith('lvt-'));
  for (const n of names) {
    const pid = Number(n.split('-')[2]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      killAndDelete(n);
    }
  }
}
