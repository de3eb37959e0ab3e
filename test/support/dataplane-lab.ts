// The dataplane test lab: client → director → N real servers (Debian nginx, plus a UDP responder), in
// network namespaces. The client reaches the real servers' subnet only through the director; the real
// servers route back through it (the director is their gateway), so DNAT needs no SNAT.
//
//   client    10.9.0.1/24   fd09::1/64                      (no route to the back subnet unless asked)
//   director  10.9.0.2/24   fd09::2/64   10.10.0.1/24  fd10::1/64   VIPs 10.9.0.100, fd09::100 on eth0
//   rsN       10.10.0.1N/24 fd10::1N/64  gateway 10.10.0.1 / fd10::1
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from './netns.js';
import { startNginx, type NginxHandle } from './nginx.js';

export const VIP4 = '10.9.0.100';
export const VIP6 = 'fd09::100';
export const UDP_PORT = 5353;

export interface ProbeResult {
  sent: number;
  ok: number;
  failed: number;
  bodies: Record<string, number>;
  errors: Record<string, number>;
  maxGapMs: number;
}

export interface DataplaneLab {
  topo: Topology;
  client: Netns;
  director: Netns;
  rs: Netns[];
  rsNames: string[];
  rs4: string[];
  rs6: string[];
  nginx: NginxHandle[];
  destroy(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
export const PROBE = join(here, 'http-probe.js');

// Answers every datagram with the server's name: the UDP counterpart of nginx's body.
const UDP_RESPONDER = `
const d = require('node:dgram'); const name = process.argv[1]; const port = Number(process.argv[2]);
for (const t of ['udp4', 'udp6']) { const s = d.createSocket({ type: t, ipv6Only: t === 'udp6' });
  s.on('message', (m, r) => s.send(name + '\\n', r.port, r.address)); s.bind(port); }`;

/** Port where the real servers expect a PROXY protocol header (v1 or v2); GET /pp answers the client it names. */
export const PP_PORT = 8081;
const PROXY_PROTOCOL_CONFIG = `listen ${PP_PORT} proxy_protocol; listen [::]:${PP_PORT} proxy_protocol;
      location = /pp { default_type text/plain; return 200 "$proxy_protocol_addr $proxy_protocol_port\\n"; }`;

export interface LabOptions {
  realServers?: number;
  nginxWorkers?: number;
  /** Route the client to the back subnet through the director (for direct-to-real-server baselines). */
  clientRouteToBack?: boolean;
}

export async function createDataplaneLab(tag: string, opts: LabOptions = {}): Promise<DataplaneLab> {
  const topo = await Topology.create(tag);
  const children: ChildProcess[] = [];
  const nginx: NginxHandle[] = [];
  try {
    const client = await topo.addHost({ name: 'client', addresses: ['10.9.0.1/24', 'fd09::1/64'] });
    const director = await topo.addHost({ name: 'dir', addresses: ['10.9.0.2/24', 'fd09::2/64', '10.10.0.1/24', 'fd10::1/64'] });
    await director.addAddress('eth0', `${VIP4}/32`);
    await director.addAddress('eth0', `${VIP6}/128`);
    // A one-armed director (clients and real servers on one segment, in and out through eth0) sends ICMP
    // redirects by default, and a client that routes to a real server through it takes them: its packets
    // then go straight over the bridge while the replies still pass the director, which keeps reply-only
    // conntrack entries (rs:80 → client:port, "unreplied"). Measured: after one `Connection: close` round
    // straight to rs1, those entries' original tuple equalled the reply tuple of later DNAT connections
    // from the same client ports, so rs1's SYN-ACKs were not un-NATed and every wrk connection ended
    // stuck in SYN retries (12 conn/s). The LVS-NAT rule for one-armed directors: no redirects.
    await director.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0 net.ipv4.conf.eth0.send_redirects=0');
    if (opts.clientRouteToBack === true) {
      await client.sh('ip route add 10.10.0.0/24 via 10.9.0.2 && ip -6 route add fd10::/64 via fd09::2');
    }
    const n = opts.realServers ?? 3;
    const rs: Netns[] = [];
    const rsNames: string[] = [];
    const rs4: string[] = [];
    const rs6: string[] = [];
    for (let i = 1; i <= n; i++) {
      const name = `rs${i}`;
      const a4 = `10.10.0.${10 + i}`;
      const a6 = `fd10::${10 + i}`;
      const host = await topo.addHost({ name, addresses: [`${a4}/24`, `${a6}/64`], gateway: '10.10.0.1' });
      await host.sh('ip -6 route add default via fd10::1');
      rs.push(host);
      rsNames.push(name);
      rs4.push(a4);
      rs6.push(a6);
    }
    for (const [i, host] of rs.entries()) {
      nginx.push(await startNginx(host, { body: rsNames[i] ?? '', ports: [80, 8080], extraServerConfig: PROXY_PROTOCOL_CONFIG, ...(opts.nginxWorkers === undefined ? {} : { workerProcesses: opts.nginxWorkers }) }));
      children.push(host.spawn('node', ['-e', UDP_RESPONDER, rsNames[i] ?? '', String(UDP_PORT)]));
    }
    return {
      topo, client, director, rs, rsNames, rs4, rs6, nginx,
      destroy: async () => {
        for (const c of children) c.kill('SIGKILL');
        await Promise.all(nginx.map((h) => h.stop().catch(() => undefined)));
        topo.destroy();
      },
    };
  } catch (e) {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(nginx.map((h) => h.stop().catch(() => undefined)));
    topo.destroy();
    throw e;
  }
}

/** Runs the probe to completion inside `ns`. */
export async function probe(ns: Netns, url: string, args: string[] = []): Promise<ProbeResult> {
  const { stdout } = await ns.exec('node', [PROBE, url, ...args], { timeoutMs: 60_000 });
  return JSON.parse(stdout) as ProbeResult;
}

/** Starts continuous traffic inside `ns`; stop() ends it and returns the counts. */
export async function startLoad(ns: Netns, url: string, args: string[] = []): Promise<{ stop: () => Promise<ProbeResult> }> {
  const child = ns.spawn('node', [PROBE, url, '--until-stdin-closes', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('running')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`probe exited early (${String(code)}): ${err}`));
    });
  });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        child.once('exit', () => {
          try {
            resolve(JSON.parse(out) as ProbeResult);
          } catch {
            reject(new Error(`probe output unreadable: ${out} ${err}`));
          }
        });
        child.stdin?.end();
      }),
  };
}

/** Keeps one HTTP keepalive connection open from `ns` and sends a request on it when asked. */
export function holdConnection(ns: Netns, url: string): { request: () => Promise<string>; close: () => void } {
  const script = `
const http = require('node:http'); const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let local = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { for (const _ of d.split('\\n').filter(Boolean)) {
  const req = http.get(process.argv[1], { agent }, (res) => { let b = ''; res.on('data', (x) => b += x);
    res.on('end', () => process.stdout.write(JSON.stringify({ body: b.trim(), port: req.socket.localPort }) + '\\n')); });
  req.on('error', (e) => process.stdout.write(JSON.stringify({ error: e.message }) + '\\n')); } });`;
  const child = ns.spawn('node', ['-e', script, url], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  const waiting: ((line: string) => void)[] = [];
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  return {
    request: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin?.write('go\n');
      }),
    close: () => {
      child.kill('SIGKILL');
    },
  };
}

export interface UserspaceRunner {
  /** The runner's process (its helper processes are its children): benchmarks read its CPU. */
  readonly pid: number;
  call<T>(op: 'apply' | 'observe' | 'listeners', desired?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** Starts the userspace dataplane inside `ns` (see userspace-runner.ts). */
export async function startUserspaceRunner(ns: Netns, options: Record<string, unknown> = {}): Promise<UserspaceRunner> {
  const child = ns.spawn('node', [join(here, 'userspace-runner.js'), JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  let err = '';
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl)) as { id: number; ok: boolean; result?: unknown; error?: string; name?: string };
      buf = buf.slice(nl + 1);
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.ok) p?.resolve(msg.result);
      else {
        const e = new Error(msg.error);
        e.name = msg.name ?? 'Error';
        p?.reject(e);
      }
    }
  });
  child.once('exit', (code) => {
    const e = new Error(`userspace runner exited (${String(code)}): ${err}`);
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('ready')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`userspace runner exited (${String(code)}): ${err}`));
    });
  });
  return {
    pid: child.pid ?? 0,
    call: <T>(op: string, desired?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        if (child.exitCode !== null || child.signalCode !== null) {
          reject(new Error(`userspace runner is gone: ${err}`));
          return;
        }
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.stdin?.write(`${JSON.stringify({ id, op, desired })}\n`);
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.stdin?.end();
        setTimeout(() => child.kill('SIGKILL'), 2000).unref();
      }),
  };
}
