// The native relay (engine 'native') on loopback, with real sockets at both ends: what a relay must get
// right besides the happy path — half-close, large transfers both ways (checked by digest), a reset from
// either side, backpressure against a reader that stops, many connections at once, a refusing real
// server — and that without the addon the dataplane falls back to the handles engine.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createUserspaceDataplane, type UserspaceDataplane } from '../../daemon/dataplane/userspace/backend.js';
import { openedRelays, relayAddon } from '../../daemon/dataplane/userspace/native-relay.js';
import type { ObservedTable, ServiceSpec } from '../../daemon/dataplane/types.js';
import { freePort } from '../support/loopback-servers.js';
import type { Logger } from 'pino';
import { pickerFor } from '../../daemon/dataplane/userspace/schedulers.js';
import { proxyHeader } from '../../daemon/dataplane/userspace/proxy-protocol.js';

const HOST = '127.0.0.1';
let dp: UserspaceDataplane;
let vipPort: number;
let rsPort: number;
let closedPort: number;
let server: Server;
/** What the real server does with each connection; set per test. */
let behaviour: (s: Socket) => void;

function sha(b: Buffer | Buffer[]): string {
  const h = createHash('sha256');
  for (const x of Array.isArray(b) ? b : [b]) h.update(x);
  return h.digest('hex');
}

function service(servers: number[]): ServiceSpec {
  return {
    id: `tcp:${HOST}:${vipPort}`, family: 4, protocol: 'tcp', address: HOST, port: vipPort, scheduler: 'rr',
    realServers: servers.map((port) => ({ id: `${HOST}:${port}`, address: HOST, port, weight: 1, method: 'nat' as const })),
  };
}

/** Connections held by the relay threads opened so far. */
function held(): number {
  return openedRelays().reduce((n, r) => n + r.count(), 0);
}

async function settle(): Promise<ObservedTable> {
  // Closed connections are reported in batches: wait until none is held.
  for (let i = 0; i < 200; i++) {
    const seen = await dp.observe();
    if (held() === 0 && seen.services.every((s) => s.realServers.every((r) => r.activeConns === 0))) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`connections still held: ${held()}`);
}

/** Connects through the VIP and collects everything until the end (or an error). */
function client(): { sock: Socket; done: Promise<{ data: Buffer[]; bytes: number; error?: string }> } {
  const sock = connect(vipPort, HOST);
  const data: Buffer[] = [];
  let bytes = 0;
  const done = new Promise<{ data: Buffer[]; bytes: number; error?: string }>((resolve) => {
    sock.on('data', (d: Buffer) => {
      data.push(d);
      bytes += d.length;
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      resolve({ data, bytes, error: e.code ?? e.message });
    });
    sock.on('close', () => {
      resolve({ data, bytes });
    });
  });
  return { sock, done };
}

before(async () => {
  assert.ok(relayAddon() !== null, 'build/Release/lvsd_relay.node is missing (npx node-gyp rebuild)');
  [vipPort, rsPort, closedPort] = [await freePort(), await freePort(), await freePort()];
  server = createServer({ allowHalfOpen: true }, (s) => {
    behaviour(s);
  });
  await new Promise<void>((r) => server.listen(rsPort, HOST, r));
  dp = createUserspaceDataplane({ engine: 'native', idleTimeoutMs: 60_000 });
  assert.equal(dp.engine, 'native');
  await dp.apply({ services: [service([rsPort])] });
});

after(async () => {
  await (dp as UserspaceDataplane | undefined)?.close();
  server.close();
});

describe('native relay', { timeout: 120_000 }, () => {
  test('half-close: the client ends its request and still gets the whole answer', async () => {
    const answer = randomBytes(3 * 1024 * 1024);
    behaviour = (s) => {
      const got: Buffer[] = [];
      s.on('data', (d: Buffer) => got.push(d));
      // The answer starts only after the client's FIN has arrived through the relay.
      s.on('end', () => {
        s.end(Buffer.concat([Buffer.from(`${Buffer.concat(got).toString()}|`), answer]));
      });
    };
    const c = client();
    c.sock.end('request');
    const r = await c.done;
    assert.equal(r.error, undefined);
    const all = Buffer.concat(r.data);
    assert.equal(all.subarray(0, 8).toString(), 'request|');
    assert.equal(sha(all.subarray(8)), sha(answer));
    const seen = await settle();
    const rs = seen.services[0]?.realServers[0];
    assert.equal(rs?.counters?.inBytes, 7);
    assert.equal(rs.counters.outBytes, answer.length + 8);
  });

  test('large transfers both ways at once arrive whole (digests)', async () => {
    behaviour = (s) => {
      s.pipe(s); // echo, with backpressure
    };
    const up = randomBytes(24 * 1024 * 1024);
    const c = client();
    c.sock.end(up);
    const r = await c.done;
    assert.equal(r.error, undefined);
    assert.equal(r.bytes, up.length);
    assert.equal(sha(r.data), sha(up));
    await settle();
  });

  test('a reset by the real server reaches the client as a reset; the connection is released', async () => {
    behaviour = (s) => {
      s.once('data', () => {
        s.resetAndDestroy();
      });
    };
    const c = client();
    c.sock.write('x');
    const r = await c.done;
    assert.equal(r.error, 'ECONNRESET');
    await settle();
  });

  test('a reset by the client reaches the real server', async () => {
    let serverSaw: Promise<string> = Promise.resolve('no connection');
    const seen = new Promise<void>((ready) => {
      behaviour = (s) => {
        serverSaw = new Promise((resolve) => {
          s.on('error', (e: NodeJS.ErrnoException) => {
            resolve(e.code ?? e.message);
          });
          s.on('end', () => {
            resolve('end');
          });
        });
        s.once('data', () => {
          ready();
        });
      };
    });
    const c = client();
    c.sock.write('x');
    await seen;
    c.sock.resetAndDestroy();
    assert.equal(await serverSaw, 'ECONNRESET');
    await settle();
  });

  test('backpressure: a real server that stops reading stops the client; nothing is lost when it resumes', async () => {
    let resume!: () => void;
    const received = new Promise<Buffer[]>((resolve) => {
      behaviour = (s) => {
        s.pause();
        resume = () => {
          const got: Buffer[] = [];
          s.on('data', (d: Buffer) => got.push(d));
          s.on('end', () => {
            resolve(got);
            s.end();
          });
          s.resume();
        };
      };
    });
    const total = 96 * 1024 * 1024;
    const chunk = randomBytes(1024 * 1024);
    const c = client();
    const hash = createHash('sha256');
    let written = 0;
    // Write until the socket says stop, and go on writing only on drain.
    await new Promise<void>((stalled) => {
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          hash.update(chunk);
          if (!c.sock.write(chunk)) {
            c.sock.once('drain', pump);
            return;
          }
        }
      };
      pump();
      // Stalled: no drain for 500 ms.
      let last = -1;
      const t = setInterval(() => {
        if (written === last) {
          clearInterval(t);
          stalled();
        }
        last = written;
      }, 500);
    });
    const inFlight = written - c.sock.writableLength;
    // Kernel buffers on loopback hold a few MB per socket; a relay without backpressure takes it all.
    assert.ok(written < total, `the client was never stopped: ${written} bytes accepted`);
    assert.ok(inFlight < 48 * 1024 * 1024, `${inFlight} bytes taken by the path while the server read nothing`);
    resume();
    await new Promise<void>((drained) => {
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          hash.update(chunk);
          if (!c.sock.write(chunk)) {
            c.sock.once('drain', pump);
            return;
          }
        }
        c.sock.end();
        drained();
      };
      if (c.sock.writableNeedDrain) c.sock.once('drain', pump);
      else pump();
    });
    const got = await received;
    assert.equal(got.reduce((n, b) => n + b.length, 0), total);
    assert.equal(sha(got), hash.digest('hex'));
    await c.done;
    await settle();
  });

  test('1,000 connections at once, each echoed its own bytes', async () => {
    behaviour = (s) => {
      s.pipe(s);
    };
    const n = 1000;
    const results = await Promise.all(Array.from({ length: n }, async (_, i) => {
      const msg = Buffer.from(`connection ${i} ${randomBytes(8).toString('hex')}`);
      const c = client();
      c.sock.end(msg);
      const r = await c.done;
      return r.error ?? (Buffer.concat(r.data).equals(msg) ? 'ok' : `${r.bytes} bytes back`);
    }));
    const failed = results.filter((x) => x !== 'ok');
    assert.equal(failed.length, 0, `${failed.length} failed: ${[...new Set(failed)].join(', ')}`);
    const seen = await settle();
    assert.ok((seen.services[0]?.realServers[0]?.counters?.conns ?? 0) >= n);
  });

  test('a refusing real server is skipped before the client sees anything', async () => {
    behaviour = (s) => {
      s.end('hello');
    };
    await dp.apply({ services: [service([closedPort, rsPort])] });
    try {
      for (let i = 0; i < 4; i++) {
        const c = client();
        const r = await c.done;
        assert.equal(Buffer.concat(r.data).toString(), 'hello');
      }
      const seen = await settle();
      const [refusing, taking] = seen.services[0]?.realServers ?? [];
      assert.equal(refusing?.counters?.conns, 0);
      assert.ok((taking?.counters?.conns ?? -1) >= 4, JSON.stringify(taking));
    } finally {
      await dp.apply({ services: [service([rsPort])] });
    }
  });

  test('without the addon (LVSD_USERSPACE_NATIVE=0) the handles engine is the default', () => {
    const code = `import('${new URL('../../daemon/dataplane/userspace/backend.js', import.meta.url).href}').then((m) => { const d = m.createUserspaceDataplane({}); console.log(d.engine); return d.close(); })`;
    const off = execFileSync(process.execPath, ['-e', code], { env: { ...process.env, LVSD_USERSPACE_NATIVE: '0' } }).toString().trim();
    const on = execFileSync(process.execPath, ['-e', code], { env: { ...process.env, LVSD_USERSPACE_NATIVE: '1' } }).toString().trim();
    assert.deepEqual([off, on], ['handles', 'native']);
  });
});

// The relay thread accepts and schedules by itself: what it decides must be what schedulers.ts decides.
describe('native accept: the thread schedules, retries, drains, writes PROXY and counts', { timeout: 120_000 }, () => {
  const names = ['a', 'b', 'c'];
  let ports: number[] = [];
  let named: Server[] = [];
  /** Each real server sends its name (PROXY tests: keeps what arrives), then ends; or holds. */
  let hold = false;
  let firstBytes: Buffer[] = [];
  let vip2: number;

  before(async () => {
    vip2 = await freePort();
    ports = [await freePort(), await freePort(), await freePort()];
    named = await Promise.all(ports.map((p, i) => new Promise<Server>((resolve) => {
      const s = createServer((sock) => {
        sock.on('error', () => undefined);
        sock.on('data', (d: Buffer) => firstBytes.push(d));
        if (!hold) sock.end(names[i] ?? '');
      });
      s.listen(p, HOST, () => {
        resolve(s);
      });
    })));
  });

  after(() => {
    for (const s of named) s.close();
  });

  function svc(scheduler: ServiceSpec['scheduler'], weights: number[], servers = ports): ServiceSpec {
    return {
      id: `tcp:${HOST}:${vip2}`, family: 4, protocol: 'tcp', address: HOST, port: vip2, scheduler,
      realServers: servers.map((port, i) => ({ id: `${HOST}:${port}`, address: HOST, port, weight: weights[i] ?? 1, method: 'nat' as const })),
    };
  }

  /** One connection through the VIP: the name of the real server that answered ('' if none). */
  async function who(payload?: Buffer): Promise<string> {
    const sock = connect(vip2, HOST);
    if (payload !== undefined) sock.write(payload);
    const got: Buffer[] = [];
    sock.on('data', (d: Buffer) => got.push(d));
    await new Promise<void>((resolve) => {
      sock.on('close', () => {
        resolve();
      });
      sock.on('error', () => undefined);
    });
    return Buffer.concat(got).toString();
  }

  function tally(xs: string[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const x of xs) out[x] = (out[x] ?? 0) + 1;
    return out;
  }

  async function withDp<T>(opts: Parameters<typeof createUserspaceDataplane>[0], body: (d: UserspaceDataplane) => Promise<T>): Promise<T> {
    const d = createUserspaceDataplane({ engine: 'native', idleTimeoutMs: 60_000, ...opts });
    try {
      return await body(d);
    } finally {
      await d.close();
    }
  }

  test('wrr 3:2:0 over 50 connections: exactly 30 and 20, none to weight 0; rr over the same: 25 and 25', async () => {
    await withDp({}, async (d) => {
      await d.apply({ services: [svc('wrr', [3, 2, 0])] });
      const seen: string[] = [];
      for (let i = 0; i < 50; i++) seen.push(await who());
      assert.deepEqual(tally(seen), { a: 30, b: 20 });
      await d.apply({ services: [svc('rr', [3, 2, 0])] });
      const rr: string[] = [];
      for (let i = 0; i < 50; i++) rr.push(await who());
      assert.deepEqual(tally(rr), { a: 25, b: 25 });
      const obs = await d.observe();
      assert.deepEqual(obs.services[0]?.realServers.map((r) => r.counters?.conns), [55, 45, 0]);
    });
  });

  test('sh and mh send a client where schedulers.ts would', async () => {
    await withDp({}, async (d) => {
      for (const scheduler of ['sh', 'mh'] as const) {
        const spec = svc(scheduler, [1, 2, 3]);
        await d.apply({ services: [spec] });
        const pool = spec.realServers.map((r) => ({ id: r.id, weight: r.weight, active: 0 }));
        const expected = pickerFor(scheduler).pick(pool, HOST);
        const seen = new Set<string>();
        for (let i = 0; i < 6; i++) seen.add(await who());
        assert.deepEqual([...seen], [names[pool.findIndex((p) => p === expected)]], scheduler);
      }
    });
  });

  test('lc spreads held connections evenly; weight 0 drains (the open ones go on, new ones avoid it)', async () => {
    hold = true;
    const socks: Socket[] = [];
    try {
      await withDp({}, async (d) => {
        await d.apply({ services: [svc('lc', [1, 1, 1])] });
        const active = async (): Promise<(number | undefined)[]> => (await d.observe()).services[0]?.realServers.map((r) => r.activeConns) ?? [];
        for (let i = 0; i < 6; i++) {
          const s = connect(vip2, HOST);
          s.on('error', () => undefined);
          socks.push(s);
          // Each connection reaches its server before the next is made, so lc sees it counted.
          await new Promise<void>((r) => s.once('connect', () => { r(); }));
          for (let k = 0; k < 100 && (await active()).reduce((n: number, x) => n + (x ?? 0), 0) < i + 1; k++) await new Promise((r) => setTimeout(r, 10));
        }
        assert.deepEqual(await active(), [2, 2, 2]);
        await d.apply({ services: [svc('lc', [0, 1, 1])] });
        for (let i = 0; i < 4; i++) {
          const s = connect(vip2, HOST);
          s.on('error', () => undefined);
          socks.push(s);
          await new Promise<void>((r) => s.once('connect', () => { r(); }));
        }
        for (let k = 0; k < 100 && (await active()).reduce((n: number, x) => n + (x ?? 0), 0) < 10; k++) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(await active(), [2, 4, 4]);
        // The drained server's connections still carry bytes: their counters grow.
        const before = (await d.observe()).services[0]?.realServers[0]?.counters?.inBytes ?? -1;
        for (const s of socks.slice(0, 6)) s.write('still here');
        let after = before;
        for (let k = 0; k < 100 && after < before + 20; k++) {
          await new Promise((r) => setTimeout(r, 10));
          after = (await d.observe()).services[0]?.realServers[0]?.counters?.inBytes ?? -1;
        }
        assert.equal(after, before + 20);
      });
    } finally {
      hold = false;
      for (const s of socks) s.destroy();
    }
  });

  test('relayThreads: 2: one socket, both threads accept; rr stays even, counters are summed, weight 0 drains', async () => {
    hold = true;
    const socks: Socket[] = [];
    const open = async (n: number): Promise<void> => {
      const more = Array.from({ length: n }, () => connect(vip2, HOST));
      for (const s of more) s.on('error', () => undefined);
      socks.push(...more);
      await Promise.all(more.map((s) => new Promise<void>((r) => s.once('connect', () => { r(); }))));
    };
    try {
      await withDp({ relayThreads: 2 }, async (d) => {
        await d.apply({ services: [svc('rr', [1, 1, 0])] });
        const relays = openedRelays();
        assert.ok(relays.length >= 2);
        const active = async (): Promise<number[]> => (await d.observe()).services[0]?.realServers.map((r) => r.activeConns) ?? [];
        const until = async (total: number): Promise<number[]> => {
          let a = await active();
          for (let k = 0; k < 200 && a.reduce((n, x) => n + x, 0) < total; k++) {
            await new Promise((r) => setTimeout(r, 10));
            a = await active();
          }
          return a;
        };
        await open(400);
        const [a = 0, b = 0, c = -1] = await until(400);
        const perThread = relays.slice(0, 2).map((r) => r.count());
        // Each thread took some of the burst; their counts add up to what observe() reports.
        assert.ok(perThread.every((n) => n > 0), `per thread: ${perThread.join(', ')}`);
        assert.equal(perThread.reduce((n, x) => n + x, 0), 400);
        assert.equal(a + b, 400);
        assert.equal(c, 0);
        // Each thread alternates by itself: at most one apart per thread.
        assert.ok(Math.abs(a - b) <= 2, `rr split ${a}/${b}`);
        // Drain a: new connections avoid it, its open ones go on.
        await d.apply({ services: [svc('rr', [0, 1, 0])] });
        await open(40);
        assert.deepEqual(await until(440), [a, b + 40, 0]);
        const conns = (await d.observe()).services[0]?.realServers.map((r) => r.counters?.conns);
        assert.deepEqual(conns, [a, b + 40, 0]);
        for (const s of socks) s.destroy();
        for (let k = 0; k < 200 && held() > 0; k++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(held(), 0);
        assert.deepEqual(await active(), [0, 0, 0]);
      });
    } finally {
      hold = false;
      for (const s of socks) s.destroy();
    }
  });

  test('a refused real server: the next one takes the client, the refusal is logged; none left: the client is closed and counted', async () => {
    const logged: { msg: string; realServer?: string }[] = [];
    const logger = {
      info: (o: { realServer?: string }, msg: string) => logged.push({ msg, ...(o.realServer === undefined ? {} : { realServer: o.realServer }) }),
      warn: (_o: unknown, msg: string) => logged.push({ msg }),
      error: () => undefined,
      debug: () => undefined,
    } as unknown as Logger;
    await withDp({ logger }, async (d) => {
      // wrr 5:1: the refusing server is every first pick; its connections all land on b.
      await d.apply({ services: [svc('wrr', [5, 1], [closedPort, ports[1] ?? 0])] });
      const seen: string[] = [];
      for (let i = 0; i < 6; i++) seen.push(await who());
      assert.deepEqual(tally(seen), { b: 6 });
      const obs = await d.observe();
      assert.deepEqual(obs.services[0]?.realServers.map((r) => r.counters?.conns), [0, 6]);
      for (let k = 0; k < 100 && logged.length < 5; k++) await new Promise((r) => setTimeout(r, 10));
      const refusals = logged.filter((l) => l.msg.includes('did not take'));
      assert.ok(refusals.length >= 5 && refusals.every((l) => l.realServer === `${HOST}:${closedPort}`), JSON.stringify(logged));
      await d.apply({ services: [svc('rr', [1], [closedPort])] });
      assert.equal(await who(), '');
      for (let k = 0; k < 100 && !logged.some((l) => l.msg.includes('no real server')); k++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(logged.some((l) => l.msg.includes('no real server')), JSON.stringify(logged));
    });
  });

  test('PROXY v1 and v2 headers are byte for byte those of proxy-protocol.ts', async () => {
    for (const version of [1, 2] as const) {
      await withDp({ proxyProtocol: version }, async (d) => {
        await d.apply({ services: [svc('rr', [1], [ports[0] ?? 0])] });
        firstBytes = [];
        const sock = connect(vip2, HOST);
        await new Promise<void>((r) => sock.once('connect', () => { r(); }));
        const local = sock.localPort ?? 0;
        sock.write('GET');
        sock.resume();
        await new Promise<void>((r) => sock.on('close', () => { r(); }));
        const head = proxyHeader(version, { protocol: 'tcp', srcAddress: HOST, srcPort: local, dstAddress: HOST, dstPort: vip2 });
        for (let k = 0; k < 200 && Buffer.concat(firstBytes).length < head.length + 3; k++) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(Buffer.concat(firstBytes).subarray(0, head.length), head, `v${version}`);
        assert.equal(Buffer.concat(firstBytes).subarray(head.length).toString(), 'GET');
      });
    }
  });
});

test('native: a VIP port taken by another socket waits (EADDRINUSE), never listens on a port of its own choosing', async () => {
  const port = await freePort();
  const other = createServer();
  await new Promise<void>((r) => other.listen(port, HOST, r));
  const d = createUserspaceDataplane({ engine: 'native', bindRetryMs: 50 });
  try {
    await d.apply({ services: [{ ...service([rsPort]), id: `tcp:${HOST}:${port}`, port }] });
    assert.deepEqual(d.listeners(), [{ service: `tcp:${HOST}:${port}`, state: 'waiting-for-address', error: 'EADDRINUSE' }]);
    // libuv's bind reports EADDRINUSE only at its own listen; listen(2) on the unbound socket would pick a port.
    const mine = execFileSync('ss', ['-Htlnp'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(`pid=${process.pid},`));
    assert.ok(mine.every((l) => !/0\.0\.0\.0:\d+/.test(l) || l.includes(`:${vipPort} `) || l.includes(`:${rsPort} `)), mine.join('\n'));
    other.close();
    for (let i = 0; i < 100 && d.listeners()[0]?.state !== 'listening'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(d.listeners()[0]?.state, 'listening');
  } finally {
    other.close();
    await d.close();
  }
});
