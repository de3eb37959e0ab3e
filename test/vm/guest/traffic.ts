// Runs INSIDE the QEMU guest: real HTTP traffic from a client namespace through an IPVS director
// (programmed by lvsd's backend in its own process) to three nginx real servers, by NAT, DR and TUN;
// distribution per scheduler and weights; lvsd restart and graceful removal under traffic.
//
//   client 10.1.0.2 ── front 10.1.0.0/24 ── director 10.1.0.1 (VIPs .100 NAT, .101 DR, .102 TUN)
//                                      └─── router 10.1.0.254 / 10.2.0.254 (DR/TUN replies)
//   r1..r3 10.2.0.11-13 ── back 10.2.0.0/24 ── director 10.2.0.1 (the NAT real servers' gateway)
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from '../../support/netns.js';
import { startNginx, type NginxHandle } from '../../support/nginx.js';
import type { DesiredTable, RealServerSpec, Scheduler, ServiceSpec } from '../../../daemon/dataplane/types.js';
import { Checks } from './checks.js';

const checks = new Checks();
const dir = mkdtempSync(join(tmpdir(), 'lvsd-traffic-'));
const here = new URL('.', import.meta.url).pathname;
const RS = ['r1', 'r2', 'r3'] as const;

const topo = await Topology.create('ipvs');
const nginx: NginxHandle[] = [];
let agent: ChildProcess | undefined;

function service(vip: string, scheduler: Scheduler, method: RealServerSpec['method'], weights: number[]): ServiceSpec {
  return {
    id: `tcp:${vip}:80`, family: 4, protocol: 'tcp', address: vip, port: 80, scheduler,
    realServers: weights.map((w, i) => ({ id: `10.2.0.${11 + i}:80`, address: `10.2.0.${11 + i}`, port: 80, weight: w, method })),
  };
}
const NAT = service('10.1.0.100', 'wrr', 'nat', [3, 2, 1]);
const DR = service('10.1.0.101', 'rr', 'dr', [1, 1, 1]);
const TUN = service('10.1.0.102', 'sh', 'tun', [1, 1, 1]);
const FULL: DesiredTable = { services: [NAT, DR, TUN] };

function write(name: string, t: DesiredTable): string {
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(t));
  return f;
}

/** Runs the lvsd agent once in the director namespace; returns its apply reports. */
async function agentOnce(file: string): Promise<{ operations: number; failures?: string[] }> {
  const { stdout } = await topo.host('dir').exec('node', [join(here, 'agent.js'), file, join(dir, 'state'), 'graceful'], { timeoutMs: 60_000 });
  const line = stdout.trim().split('\n').pop() ?? '';
  return (JSON.parse(line) as { report: { operations: number; failures?: string[] } }).report;
}

function startLoad(ns: Netns, url: string, concurrency: number): { stop: () => Promise<{ ok: number; failed: number; errors: Record<string, number>; bodies: Record<string, number> }> } {
  const child = ns.spawn('node', [join(here, 'load.js'), '--concurrency', String(concurrency), url]);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        child.once('exit', () => {
          try {
            resolve(JSON.parse(out.trim()) as { ok: number; failed: number; errors: Record<string, number>; bodies: Record<string, number> });
          } catch {
            reject(new Error(`load printed: ${out}`));
          }
        });
        child.kill('SIGTERM');
      }),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ipvsadm = async (): Promise<string> => (await topo.host('dir').exec('ipvsadm', ['-Ln'])).stdout;

try {
  await checks.check('topology: client, director, router, three nginx real servers (NAT gateway, DR lo VIP, TUN tunl0 VIP)', async () => {
    const client = await topo.addHost({ name: 'client', addresses: ['10.1.0.2/24'], gateway: '10.1.0.1' });
    const d = await topo.addHost({ name: 'dir', addresses: ['10.1.0.1/24', '10.1.0.100/32', '10.1.0.101/32', '10.1.0.102/32'] });
    await topo.link('dir', 'eth1', 'back', ['10.2.0.1/24']);
    const router = await topo.addHost({ name: 'router', addresses: ['10.1.0.254/24'] });
    await topo.link('router', 'eth1', 'back', ['10.2.0.254/24']);
    await d.sh('sysctl -qw net.ipv4.ip_forward=1');
    await router.sh('sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.eth0.rp_filter=0 net.ipv4.conf.eth1.rp_filter=0');
    for (const [i, name] of RS.entries()) {
      const ns = await topo.addHost({ name, addresses: [], gateway: undefined });
      // addHost put eth0 on "lan" (the front); real servers live on the back segment only.
      await ns.exec('ip', ['link', 'del', 'eth0']);
      await topo.link(name, 'eth0', 'back', [`10.2.0.${11 + i}/24`]);
      await ns.sh(
        [
          'ip route add default via 10.2.0.1',
          'ip addr add 10.1.0.101/32 dev lo',
          'ip link set tunl0 up && ip addr add 10.1.0.102/32 dev tunl0',
          'sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2',
          'sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0 net.ipv4.conf.eth0.rp_filter=0',
          // DR and TUN replies come from a VIP and must not go back through the director.
          'ip rule add from 10.1.0.101 table 100 && ip rule add from 10.1.0.102 table 100',
          'ip route add default via 10.2.0.254 table 100',
        ].join(' && '),
      );
      nginx.push(await startNginx(ns, { body: name }));
    }
    await client.sh('true');
  });

  await checks.check('lvsd programs NAT (wrr 3:2:1), DR (rr) and TUN (sh) in the director namespace', async () => {
    const r = await agentOnce(write('full.json', FULL));
    assert.equal(r.operations, 12);
    assert.equal(r.failures, undefined);
    return await ipvsadm();
  });

  await checks.check('distribution: NAT wrr 3:2:1 → 60/40/20; DR rr → 40/40/40; TUN sh → one server for one client', async () => {
    const { stdout } = await topo.host('client').exec('node', [join(here, 'load.js'), '--count', '120', 'http://10.1.0.100/', 'http://10.1.0.101/', 'http://10.1.0.102/'], { timeoutMs: 120_000 });
    const got = JSON.parse(stdout) as Record<string, Record<string, number>>;
    const nat = got['http://10.1.0.100/'] ?? {};
    const dr = got['http://10.1.0.101/'] ?? {};
    const tun = got['http://10.1.0.102/'] ?? {};
    const near = (v: number | undefined, want: number): boolean => v !== undefined && Math.abs(v - want) <= want * 0.1 + 1;
    assert.ok(near(nat.r1, 60) && near(nat.r2, 40) && near(nat.r3, 20), `NAT ${JSON.stringify(nat)}`);
    assert.ok(near(dr.r1, 40) && near(dr.r2, 40) && near(dr.r3, 40), `DR ${JSON.stringify(dr)}`);
    assert.deepEqual(Object.values(tun), [120], `TUN ${JSON.stringify(tun)}`);
    return stdout.trim();
  });

  await checks.check('restart lvsd under continuous traffic (NAT and DR): zero failed requests, the restarted lvsd adopts with 0 operations', async () => {
    const l1 = startLoad(topo.host('client'), 'http://10.1.0.100/', 4);
    const l2 = startLoad(topo.host('client'), 'http://10.1.0.101/', 2);
    await sleep(1500);
    // A long-running lvsd, killed hard mid-traffic, then a fresh one.
    const stay = topo.host('dir').spawn('node', [join(here, 'agent.js'), join(dir, 'full.json'), join(dir, 'state'), 'graceful', '--stay']);
    agent = stay;
    await sleep(2500);
    stay.kill('SIGKILL');
    agent = undefined;
    const again = await agentOnce(join(dir, 'full.json'));
    await sleep(1000);
    const [s1, s2] = [await l1.stop(), await l2.stop()];
    assert.equal(again.operations, 0);
    assert.ok(s1.ok > 20 && s2.ok > 10, `too little traffic: ${JSON.stringify([s1, s2])}`);
    assert.equal(s1.failed + s2.failed, 0, JSON.stringify([s1.errors, s2.errors]));
    return `NAT ${s1.ok} ok, DR ${s2.ok} ok, 0 failed`;
  });

  await checks.check('graceful removal under traffic: r2 goes to weight 0, then is deleted; zero failed requests', async () => {
    write('live.json', FULL);
    const stay = topo.host('dir').spawn('node', [join(here, 'agent.js'), join(dir, 'live.json'), join(dir, 'state'), 'graceful', '--stay'], { env: { ...process.env, DRAIN_TIMEOUT_MS: '4000' } });
    agent = stay;
    let log = '';
    stay.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    // Wait for its first apply report: until then SIGHUP would kill it, not reload it.
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => { reject(new Error(`agent gave no report in 30 s\n${log}`)); }, 30_000);
      stay.stdout?.once('data', () => { clearTimeout(t); resolve(); });
    });
    const load = startLoad(topo.host('client'), 'http://10.1.0.100/', 4);
    await sleep(5000); // node starts slowly in the guest: let r2 serve traffic before it leaves
    write('live.json', { services: [{ ...NAT, realServers: NAT.realServers.filter((r) => r.address !== '10.2.0.12') }, DR, TUN] });
    stay.kill('SIGHUP');
    let sawWeight0 = false;
    let gone = false;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !gone) {
      const t = await ipvsadm();
      const natBlock = t.split('TCP').find((b) => b.includes('10.1.0.100:80')) ?? '';
      const line = natBlock.split('\n').find((l) => l.includes('10.2.0.12:80'));
      if (line !== undefined && /Masq\s+0\s/.test(line)) sawWeight0 = true;
      if (line === undefined && sawWeight0) gone = true;
      await sleep(300);
    }
    await sleep(1000);
    const s = await load.stop();
    stay.kill('SIGTERM');
    agent = undefined;
    assert.ok(sawWeight0, `r2 was never seen at weight 0\n${log}`);
    assert.ok(gone, `r2 was not deleted after the drain timeout\n${await ipvsadm()}\n${log}`);
    assert.match(log, /real server draining at weight 0/);
    assert.ok(s.ok > 20, JSON.stringify(s));
    assert.ok((s.bodies.r2 ?? 0) > 0, `r2 served nothing before its removal: ${JSON.stringify(s.bodies)}`);
    assert.equal(s.failed, 0, JSON.stringify(s.errors));
    return `${s.ok} ok, 0 failed; bodies ${JSON.stringify(s.bodies)}`;
  });
} finally {
  agent?.kill('SIGKILL');
  for (const n of nginx) await n.stop().catch(() => undefined);
  topo.destroy();
}
checks.finish();
