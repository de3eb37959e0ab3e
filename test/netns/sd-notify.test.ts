// `lvsd run` under a service manager's eyes: a python3 listener on a unix datagram socket stands in for
// systemd's $NOTIFY_SOCKET, and a real lvsd (VRRP worker, nftables, API) runs in a test namespace with
// NOTIFY_SOCKET and WATCHDOG_USEC set. READY=1 only once the API answers, WATCHDOG=1 keeps coming,
// RELOADING=1 … READY=1 frame a SIGHUP, STOPPING=1 comes with SIGTERM. The addon's sender is also tried
// against an abstract ("@name") address.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localRequest } from '../../daemon/api/local-client.js';
import { native } from '../../daemon/net/native.js';
import { notifyAddress } from '../../daemon/systemd/notify.js';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { startRun } from '../support/lvsd-run.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE_TEXT = readFileSync(join(ROOT, 'config/lvsd.yaml'), 'utf8');

// Prints every datagram as one JSON line with the receiver's CLOCK_MONOTONIC in µs.
const LISTENER = `
import json, socket, sys, time
addr = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0" + addr[1:] if addr.startswith("@") else addr)
print(json.dumps({"listening": True}), flush=True)
while True:
    data = s.recv(4096)
    print(json.dumps({"usec": time.monotonic_ns() // 1000, "text": data.decode()}), flush=True)
`;

interface Datagram {
  usec: number;
  text: string;
  fields: Record<string, string>;
}

class Listener {
  readonly got: Datagram[] = [];
  private readonly child: ChildProcess;
  readonly ready: Promise<void>;
  constructor(address: string) {
    this.child = spawn('python3', ['-c', LISTENER, address], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    let listening = (): void => undefined;
    this.ready = new Promise((r) => (listening = r));
    this.child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as { listening?: true; usec: number; text: string };
        buf = buf.slice(nl + 1);
        if (line.listening === true) {
          listening();
          continue;
        }
        const fields = Object.fromEntries(line.text.split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
        this.got.push({ usec: line.usec, text: line.text, fields });
      }
    });
  }
  async until(what: string, ok: (got: Datagram[]) => boolean, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ok(this.got)) {
      if (Date.now() > end) assert.fail(`timed out waiting for ${what}; got:\n${this.got.map((d) => JSON.stringify(d.text)).join('\n')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  close(): void {
    this.child.kill('SIGKILL');
  }
}

let topo: Topology;
let host: Netns;
let dir: string;

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft', 'python3');
  topo = await Topology.create('sdnotify');
  host = await topo.addHost({ name: 'd1', addresses: ['192.168.77.2/24'] });
  await topo.link('d1', 'eth1', 'inside', ['10.0.1.2/24']);
  dir = mkdtempSync(join(tmpdir(), 'lvsd-notify-'));
});

after(() => {
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const localise = (text: string): string =>
  text.replace('/run/lvsd/lvsd.sock', join(dir, 'lvsd.sock')).replace('/var/lib/lvsd/state.json', join(dir, 'state.json')).replace('dataplane: auto', 'dataplane: nftables');

test('lvsd run notifies READY after the API answers, pings the watchdog, frames a reload (SIGHUP or API), says STOPPING', async () => {
  const socket = join(dir, 'notify.sock');
  const listener = new Listener(socket);
  await listener.ready;
  const cfg = join(dir, 'lvsd.yaml');
  writeFileSync(cfg, localise(EXAMPLE_TEXT));
  // WATCHDOG_USEC 1 s: a ping every 500 ms. Path sockets are not namespaced, so the host listener hears it.
  const run = startRun(['--config', cfg], ['ip', 'netns', 'exec', host.name, 'env', `NOTIFY_SOCKET=${socket}`, 'WATCHDOG_USEC=1000000']);
  try {
    await listener.until('READY=1', (g) => g.some((d) => d.fields.READY === '1'));
    // The API answered before READY went out (the daemon starts it first): it answers now.
    const status = await localRequest<{ node: string }>(join(dir, 'lvsd.sock'), 'GET', '/api/v1/status');
    assert.equal(status.body.node, 'director-1');
    assert.ok(run.lines.some((l) => l.msg === 'running'));
    const ready = listener.got.find((d) => d.fields.READY === '1');
    assert.match(ready?.fields.STATUS ?? '', /VI_OUTSIDE (BACKUP|MASTER)/);
    assert.match(ready?.fields.STATUS ?? '', /1 virtual server, \d\/3 real servers serving \(nftables\)/);
    assert.equal(listener.got.filter((d) => d.fields.STOPPING !== undefined || d.fields.RELOADING !== undefined).length, 0);

    // The watchdog keeps being fed (the event loop runs and the VRRP worker answers).
    const readyAt = listener.got.indexOf(ready as Datagram);
    await listener.until('3 watchdog pings after READY', (g) => g.slice(readyAt).filter((d) => d.fields.WATCHDOG === '1').length >= 3);

    // SIGHUP with a changed weight: RELOADING=1 (with the monotonic clock systemd compares against), then READY=1.
    writeFileSync(cfg, localise(EXAMPLE_TEXT).replace('{ address: 10.0.1.12, port: 80, weight: 100 }', '{ address: 10.0.1.12, port: 80, weight: 10 }'));
    const before = listener.got.length;
    run.child.kill('SIGHUP');
    await run.waitFor(/^reload done: /);
    await listener.until('READY=1 after RELOADING=1', (g) => {
      const since = g.slice(before);
      const r = since.findIndex((d) => d.fields.RELOADING === '1');
      return r >= 0 && since.slice(r + 1).some((d) => d.fields.READY === '1');
    });
    const reloading = listener.got.slice(before).find((d) => d.fields.RELOADING === '1');
    const mono = Number(reloading?.fields.MONOTONIC_USEC);
    // Same clock as the receiver's CLOCK_MONOTONIC (a wall-clock value would be decades off).
    assert.ok(Number.isFinite(mono) && Math.abs((reloading?.usec ?? 0) - mono) < 10_000_000, `MONOTONIC_USEC ${String(mono)} vs receiver ${String(reloading?.usec)}`);
    assert.match(reloading?.fields.STATUS ?? '', /^reloading /);

    // The same frame around a config applied over the admin socket (`lvsd reload`, the panel).
    const viaApi = listener.got.length;
    const applied = await localRequest<{ ok: boolean }>(join(dir, 'lvsd.sock'), 'POST', '/api/v1/config/apply', {
      text: localise(EXAMPLE_TEXT).replace('{ address: 10.0.1.12, port: 80, weight: 100 }', '{ address: 10.0.1.12, port: 80, weight: 20 }'),
    });
    assert.equal(applied.body.ok, true);
    await listener.until('READY=1 after RELOADING=1 around an API apply', (g) => {
      const since = g.slice(viaApi);
      const r = since.findIndex((d) => d.fields.RELOADING === '1');
      return r >= 0 && since.slice(r + 1).some((d) => d.fields.READY === '1');
    });
    assert.match(listener.got.slice(viaApi).find((d) => d.fields.RELOADING === '1')?.fields.STATUS ?? '', /^applying a config from /);

    run.child.kill('SIGTERM');
    assert.equal(await run.exit, 0);
    await listener.until('STOPPING=1', (g) => g.some((d) => d.fields.STOPPING === '1'));
    const stopping = listener.got.find((d) => d.fields.STOPPING === '1');
    assert.equal(stopping?.fields.STATUS, 'SIGTERM: shutting down');
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    listener.close();
  }
});

test('the addon sends one datagram to an abstract "@name" address, and names the error when nobody listens', async () => {
  const name = `@lvsd-test-notify-${process.pid}`;
  const listener = new Listener(name);
  try {
    await listener.ready;
    const n = native().sendUnixDatagram(notifyAddress(name), Buffer.from('READY=1\nSTATUS=hello\n'));
    assert.equal(n, 'READY=1\nSTATUS=hello\n'.length);
    await listener.until('the datagram', (g) => g.length === 1);
    assert.deepEqual(listener.got[0]?.fields, { READY: '1', STATUS: 'hello' });
  } finally {
    listener.close();
  }
  assert.throws(() => native().sendUnixDatagram(notifyAddress(join(dir, 'nobody.sock')), Buffer.from('READY=1\n')), /sendto\(AF_UNIX\): No such file or directory/);
});
