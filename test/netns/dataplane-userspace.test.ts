// The userspace dataplane with real traffic: the proxy runs inside the director namespace and relays the
// client namespace's connections to three nginx namespaces.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { requireCommands, requireRoot } from '../support/prereq.js';
import {
  createDataplaneLab, holdConnection, probe, startLoad, startUserspaceRunner,
  PP_PORT, UDP_PORT, VIP4, VIP6, type DataplaneLab, type UserspaceRunner,
} from '../support/dataplane-lab.js';
import type { ApplyReport, DesiredTable, ObservedTable, RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';
import type { ListenerStatus } from '../../daemon/dataplane/userspace/backend.js';

let lab: DataplaneLab;
let us: UserspaceRunner;
const PORT = 8000;
const IDLE_MS = 1500;
/** Long enough for a lost SYN's retransmit (~1 s), short enough for a test. */
const CONNECT_TIMEOUT_MS = 2000;

function rs(address: string, port: number, weight = 1): RealServerSpec {
  return { id: address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`, address, port, weight, method: 'nat' };
}

function http4(weights: number[], scheduler: ServiceSpec['scheduler'] = 'wrr', port = 80): ServiceSpec {
  return { id: `tcp:${VIP4}:${PORT}`, family: 4, protocol: 'tcp', address: VIP4, port: PORT, scheduler, realServers: lab.rs4.map((a, i) => rs(a, port, weights[i] ?? 1)) };
}

const apply = (...services: ServiceSpec[]): Promise<ApplyReport> => us.call<ApplyReport>('apply', { services } satisfies DesiredTable);

before(async () => {
  requireRoot();
  requireCommands('ip', 'nginx', 'node', 'nft');
  lab = await createDataplaneLab('user');
});

after(async () => {
  // before() may have failed half-way: clean up whatever exists.
  await (lab as DataplaneLab | undefined)?.destroy();
});

// The three TCP engines (the native relay, the default; libuv handles and net.Socket, the fallbacks)
// pass the same tests.
for (const engine of ['native', 'handles', 'sockets'] as const) describe(`engine: ${engine}`, () => {
  before(async () => {
    us = await startUserspaceRunner(lab.director, {
      engine,
      bindRetryMs: 100,
      idleTimeoutMs: IDLE_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      proxyProtocolByService: { [`tcp:${VIP4}:${PP_PORT}`]: 1, [`tcp:[${VIP6}]:${PP_PORT}`]: 2 },
    });
  });
  after(async () => {
    await (us as UserspaceRunner | undefined)?.stop();
    await lab.director.sh('ip addr del 10.9.0.200/32 dev eth0 || true');
  });

  test('rr and wrr: distribution follows the weights; weight 0 gets nothing', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '300']);
    assert.equal(r.failed, 0, JSON.stringify(r.errors));
    for (const name of lab.rsNames) assert.equal(r.bodies[name], 100, JSON.stringify(r.bodies));
    await apply(http4([3, 1, 0], 'wrr'));
    const w = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '400']);
    assert.equal(w.failed, 0);
    assert.deepEqual(w.bodies, { rs1: 300, rs2: 100 });
  });

  test('sh keeps one client on one server; lc spreads held connections', async () => {
    await apply(http4([1, 1, 1], 'sh'));
    const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '50']);
    assert.equal(r.failed, 0);
    assert.equal(Object.keys(r.bodies).length, 1);
    await apply(http4([1, 1, 1], 'lc'));
    const held = [0, 1, 2].map(() => holdConnection(lab.client, `http://${VIP4}:${PORT}/`));
    try {
      const bodies = await Promise.all(held.map(async (h) => (JSON.parse(await h.request()) as { body: string }).body));
      // Sequential requests would all see zero active connections; three held ones must land on three servers.
      const seen = await us.call<ObservedTable>('observe');
      const active = seen.services[0]?.realServers.map((x) => x.activeConns) ?? [];
      assert.equal(active.reduce((a, b) => a + b, 0), 3, JSON.stringify(active));
      assert.equal(new Set(bodies).size, 3, JSON.stringify(bodies));
    } finally {
      for (const h of held) h.close();
    }
  });

  test('a refusing real server is skipped: zero failed requests', async () => {
    // rs1:81 has no listener (RST); the connection is retried on the next real server.
    const svc = http4([1, 1, 1], 'rr');
    svc.realServers = [rs(lab.rs4[0] ?? '', 81), rs(lab.rs4[1] ?? '', 80), rs(lab.rs4[2] ?? '', 80)];
    await apply(svc);
    const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '90']);
    assert.equal(r.failed, 0, JSON.stringify(r.errors));
    assert.deepEqual(Object.keys(r.bodies).sort(), ['rs2', 'rs3']);
    assert.equal((r.bodies.rs2 ?? 0) + (r.bodies.rs3 ?? 0), 90);
  });

  test('drain: an open connection keeps its server, new ones avoid it; removal keeps it too', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const held = holdConnection(lab.client, `http://${VIP4}:${PORT}/`);
    try {
      const first = JSON.parse(await held.request()) as { body: string; port: number };
      const idx = lab.rsNames.indexOf(first.body);
      const weights = [1, 1, 1];
      weights[idx] = 0;
      await apply(http4(weights, 'rr'));
      assert.deepEqual(JSON.parse(await held.request()), first);
      const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '40']);
      assert.equal(r.failed, 0);
      assert.equal(r.bodies[first.body], undefined);
      const seen = await us.call<ObservedTable>('observe');
      assert.equal(seen.services[0]?.realServers[idx]?.activeConns, 1);
      // Remove the server entirely, then the whole service: the held connection still answers.
      const without = http4([1, 1, 1], 'rr');
      without.realServers.splice(idx, 1);
      await apply(without);
      assert.deepEqual(JSON.parse(await held.request()), first);
      await apply();
      assert.deepEqual(JSON.parse(await held.request()), first);
      const gone = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '1']);
      assert.equal(gone.failed, 1, 'no listener after the service is removed');
    } finally {
      held.close();
    }
  });

  test('IPv6 TCP, UDP, and PROXY protocol v1 (IPv4) and v2 (IPv6) to the real servers', async () => {
    const v6: ServiceSpec = { id: `tcp:[${VIP6}]:${PORT}`, family: 6, protocol: 'tcp', address: VIP6, port: PORT, scheduler: 'rr', realServers: lab.rs6.map((a) => rs(a, 8080)) };
    const udp: ServiceSpec = { id: `udp:${VIP4}:${UDP_PORT}`, family: 4, protocol: 'udp', address: VIP4, port: UDP_PORT, scheduler: 'rr', realServers: lab.rs4.map((a) => rs(a, UDP_PORT)) };
    const pp4: ServiceSpec = { ...http4([1, 1, 1], 'rr', PP_PORT), id: `tcp:${VIP4}:${PP_PORT}`, port: PP_PORT };
    const pp6: ServiceSpec = { ...v6, id: `tcp:[${VIP6}]:${PP_PORT}`, port: PP_PORT, realServers: lab.rs6.map((a) => rs(a, PP_PORT)) };
    await apply(v6, udp, pp4, pp6);
    const r6 = await probe(lab.client, `http://[${VIP6}]:${PORT}/`, ['--count', '30']);
    assert.equal(r6.failed, 0, JSON.stringify(r6.errors));
    assert.deepEqual(Object.keys(r6.bodies).sort(), lab.rsNames);
    const ru = await probe(lab.client, '', ['--udp', `${VIP4}:${UDP_PORT}`, '--count', '30', '--concurrency', '3']);
    assert.equal(ru.failed, 0, JSON.stringify(ru.errors));
    assert.deepEqual(Object.keys(ru.bodies).sort(), lab.rsNames);
    const p1 = await probe(lab.client, `http://${VIP4}:${PP_PORT}/pp`, ['--count', '3', '--concurrency', '1']);
    assert.deepEqual([...new Set(Object.keys(p1.bodies).map((b) => b.split(' ')[0]))], ['10.9.0.1'], JSON.stringify(p1));
    const p2 = await probe(lab.client, `http://[${VIP6}]:${PP_PORT}/pp`, ['--count', '3', '--concurrency', '1']);
    assert.deepEqual([...new Set(Object.keys(p2.bodies).map((b) => b.split(' ')[0]))], ['fd09::1'], JSON.stringify(p2));
  });

  test('a VIP that is not on the director yet: apply succeeds, the listener waits, then serves when it appears', async () => {
    const later = '10.9.0.200';
    const svc: ServiceSpec = { ...http4([1, 1, 1], 'rr'), id: `tcp:${later}:${PORT}`, address: later };
    await apply(svc);
    const waiting = await us.call<ListenerStatus[]>('listeners');
    assert.deepEqual(waiting, [{ service: svc.id, state: 'waiting-for-address', error: 'EADDRNOTAVAIL' }]);
    await lab.director.addAddress('eth0', `${later}/32`);
    const deadline = Date.now() + 5000;
    let state = '';
    while (Date.now() < deadline && state !== 'listening') {
      await new Promise((r) => setTimeout(r, 100));
      state = (await us.call<ListenerStatus[]>('listeners'))[0]?.state ?? '';
    }
    assert.equal(state, 'listening');
    const r = await probe(lab.client, `http://${later}:${PORT}/`, ['--count', '9']);
    assert.equal(r.failed, 0);
  });

  test('50 applies under continuous load: zero failed requests', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const load = await startLoad(lab.client, `http://${VIP4}:${PORT}/`, ['--concurrency', '8']);
    const variants = [[1, 1, 1], [2, 1, 0], [0, 1, 1], [1, 0, 3], [5, 5, 1]];
    let applied = 0;
    try {
      for (let i = 0; i < 50; i++) {
        const extra: ServiceSpec[] = i % 2 === 0 ? [{ ...http4([1, 1, 1]), id: `tcp:${VIP4}:${PORT + 1}`, port: PORT + 1 }] : [];
        await apply(http4(variants[i % variants.length] ?? [1, 1, 1], i % 3 === 0 ? 'lc' : 'wrr'), ...extra);
        applied++;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      const r = await load.stop();
      assert.equal(applied, 50);
      assert.ok(r.ok > 200, `only ${r.ok} requests went through`);
      assert.equal(r.failed, 0, `failed ${r.failed} of ${r.sent}: ${JSON.stringify(r.errors)}`);
    }
  });

  test('an idle connection is closed after the idle timeout, a busy one is not', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const held = holdConnection(lab.client, `http://${VIP4}:${PORT}/`);
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    try {
      const a = JSON.parse(await held.request()) as { port: number };
      for (let i = 0; i < 4; i++) {
        await sleep(IDLE_MS / 3);
        assert.equal((JSON.parse(await held.request()) as { port: number }).port, a.port, 'traffic keeps the connection');
      }
      await sleep(IDLE_MS + 1200);
      // The proxy closed the idle connection: the client's agent had to open a new one.
      assert.notEqual((JSON.parse(await held.request()) as { port: number }).port, a.port);
    } finally {
      held.close();
    }
  });

  test('a real server whose SYN is lost is connected when the retransmit gets through; one that never answers is passed over at the connect timeout', async () => {
    // On this lab's veths a connect is usually complete when connect() returns (the native relay relays such a
    // connection at once); a lost SYN makes the wait for the connect's outcome real.
    const rs1 = lab.rs[0];
    assert.ok(rs1 !== undefined);
    const synDrops = async (): Promise<number> => Number(/counter packets (\d+)/.exec((await rs1.sh('nft list chain inet synloss in')).stdout)?.[1] ?? NaN);
    const dropSyns = (which: string): Promise<unknown> =>
      rs1.sh(`nft flush chain inet synloss in && nft add rule inet synloss in tcp dport 80 'tcp flags & (syn | ack) == syn' ${which} counter drop`);
    await rs1.sh(`nft add table inet synloss && nft add chain inet synloss in '{ type filter hook input priority 0; }'`);
    try {
      // Every other SYN to rs1 is dropped: each connection waits for a retransmit (~1 s) or goes at once.
      await dropSyns('numgen inc mod 2 == 0');
      await apply(http4([1, 0, 0], 'rr'));
      const slow = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '4', '--concurrency', '1']);
      assert.equal(slow.failed, 0, JSON.stringify(slow.errors));
      assert.deepEqual(slow.bodies, { rs1: 4 });
      assert.ok((await synDrops()) >= 2, 'SYNs to rs1 were dropped');
      // Every SYN to rs1 is dropped: a connection given rs1 goes to rs2 after the connect timeout.
      await dropSyns('');
      await apply(http4([1, 1, 0], 'rr'));
      const t0 = Date.now();
      const dead = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '2', '--concurrency', '1']);
      assert.equal(dead.failed, 0, JSON.stringify(dead.errors));
      assert.deepEqual(dead.bodies, { rs2: 2 });
      assert.ok((await synDrops()) >= 1, 'a connection was tried on rs1');
      assert.ok(Date.now() - t0 >= CONNECT_TIMEOUT_MS - 100, `rs2 answered only after the connect timeout (${Date.now() - t0} ms)`);
    } finally {
      await rs1.sh('nft delete table inet synloss');
    }
  });

  test('DR is refused with UnsupportedByDataplane and changes nothing', async () => {
    const svc = http4([1, 1, 1], 'rr');
    const first = svc.realServers[0];
    assert.ok(first !== undefined);
    first.method = 'dr';
    await assert.rejects(apply(svc), (e: Error) => e.name === 'UnsupportedByDataplane' && /DR forwarding/.test(e.message));
  });
});

// Two processes accepting on the same sockets: scheduling state is per process, so spreads are checked
// loosely; failures, retries, drain and the summed counts are checked exactly.
for (const engine of ['native', 'handles'] as const) describe(`workers: 2 (helper process), engine: ${engine}`, () => {
  before(async () => {
    us = await startUserspaceRunner(lab.director, { engine, workers: 2, bindRetryMs: 100 });
  });
  after(async () => {
    await (us as UserspaceRunner | undefined)?.stop();
  });

  test('spread, refusal retry and zero failures under 20 applies', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '300', '--concurrency', '8']);
    assert.equal(r.failed, 0, JSON.stringify(r.errors));
    for (const name of lab.rsNames) assert.ok((r.bodies[name] ?? 0) >= 50, JSON.stringify(r.bodies));
    const refusing = http4([1, 1, 1], 'rr');
    refusing.realServers[0] = rs(lab.rs4[0] ?? '', 81);
    const load = await startLoad(lab.client, `http://${VIP4}:${PORT}/`, ['--concurrency', '8']);
    try {
      for (let i = 0; i < 20; i++) {
        await apply(i % 2 === 0 ? refusing : http4([1, 2, 1], 'wrr'));
        await new Promise((res) => setTimeout(res, 30));
      }
    } finally {
      const l = await load.stop();
      assert.ok(l.ok > 100, `only ${l.ok} requests`);
      assert.equal(l.failed, 0, JSON.stringify(l.errors));
    }
  });

  test('drain keeps the open connection; observe sums both processes', async () => {
    await apply(http4([1, 1, 1], 'rr'));
    const held = holdConnection(lab.client, `http://${VIP4}:${PORT}/`);
    try {
      const first = JSON.parse(await held.request()) as { body: string; port: number };
      const idx = lab.rsNames.indexOf(first.body);
      const weights = [1, 1, 1];
      weights[idx] = 0;
      await apply(http4(weights, 'rr'));
      assert.deepEqual(JSON.parse(await held.request()), first);
      const r = await probe(lab.client, `http://${VIP4}:${PORT}/`, ['--count', '40', '--concurrency', '4']);
      assert.equal(r.failed, 0);
      assert.equal(r.bodies[first.body], undefined);
      const seen = await us.call<ObservedTable>('observe');
      const svc = seen.services[0];
      assert.equal(svc?.realServers[idx]?.activeConns, 1);
      assert.ok((svc.counters?.conns ?? 0) >= 41, JSON.stringify(svc.counters));
    } finally {
      held.close();
    }
  });
});
