// E-mail alerts end to end: a real `lvsd run` in a namespace (nftables dataplane, a VRRP instance, a virtual
// server with quorum 2 over two real servers) mails through a real SMTP server from Debian, OpenSMTPD, in
// another namespace, which delivers into a maildir. Each message is read back and parsed: the subjects and
// bodies keepalived 2.2.7 sends (measured, docs/alerts.md), From, To (one message for both recipients), and
// what lvsd adds (X-Mailer). Then the server dies — first refusing (stopped), then black-holed (nft drop, so
// every message waits out the connect timeout): health transitions go on unhindered, the failure is logged once
// per burst, a full queue drops, and /metrics counts sent, failed and dropped. A restarted server gets mail again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Topology, type Netns } from '../support/netns.js';
import { waitForPort } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { startRun, type LvsdRun } from '../support/lvsd-run.js';

const WAIT = 30_000;
let topo: Topology;
let dir: string;
let maildir: string;
let mail: Netns;
let director: Netns;
let rs2: Netns;
let lvsd: LvsdRun;
let smtpd: ChildProcess | null = null;
let rs2Server: ChildProcess | null = null;
const children: ChildProcess[] = [];

interface Received { subject: string; from: string; to: string; deliveredTo: string; mailer: string; body: string }

/** Every message in the maildir, parsed (headers unfolded; the body after the blank line). */
function received(): Received[] {
  const nd = join(maildir, 'new');
  if (!existsSync(nd)) return [];
  return readdirSync(nd).map((f) => {
    const text = readFileSync(join(nd, f), 'utf8').replace(/\r\n/g, '\n');
    const split = text.indexOf('\n\n');
    const headers = text.slice(0, split).replace(/\n[ \t]+/g, ' ').split('\n');
    const h = (name: string): string => headers.find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}: `))?.slice(name.length + 2) ?? '';
    return { subject: h('Subject'), from: h('From'), to: h('To'), deliveredTo: h('Delivered-To'), mailer: h('X-Mailer'), body: text.slice(split + 2).trim() };
  });
}

async function until<T>(what: string, f: () => T | undefined | Promise<T | undefined>, timeoutMs = WAIT): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Both recipients' copies of the message with this subject. */
const copies = (subject: string): Received[] | undefined => {
  const got = received().filter((m) => m.subject === subject);
  return got.length >= 2 ? got : undefined;
};

async function metric(outcome: string): Promise<number> {
  const { stdout } = await director.exec('curl', ['-s', 'http://127.0.0.1:9180/metrics']);
  const m = new RegExp(`^lvsd_alert_mails_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(stdout);
  return Number(m?.[1] ?? NaN);
}

function startSmtpd(): ChildProcess {
  const c = mail.spawn('smtpd', ['-d', '-f', join(dir, 'smtpd.conf')]);
  children.push(c);
  return c;
}

/** A real server: accepts and closes (a checker that resets its connection must not crash it). */
function serve(ns: Netns, address: string): ChildProcess {
  const c = ns.spawn(process.execPath, ['-e', `require('node:net').createServer((s) => { s.on('error', () => {}); s.end(); }).listen(80, '${address}')`]);
  children.push(c);
  return c;
}

const killed = (c: ChildProcess | null): Promise<void> => new Promise((r) => {
  if (c === null || c.exitCode !== null || c.signalCode !== null) { r(); return; }
  c.once('exit', () => { r(); });
  c.kill('SIGKILL');
});

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft', 'smtpd', 'curl');
  topo = await Topology.create('alerts');
  dir = mkdtempSync(join(tmpdir(), 'lvsd-alerts-'));
  maildir = join(dir, 'mail');
  chmodSync(dir, 0o755);
  mail = await topo.addHost({ name: 'mail', addresses: ['10.79.0.25/24'] });
  director = await topo.addHost({ name: 'd1', addresses: ['10.79.0.1/24'] });
  const rs1 = await topo.addHost({ name: 'rs1', addresses: ['10.79.0.11/24'] });
  rs2 = await topo.addHost({ name: 'rs2', addresses: ['10.79.0.12/24'] });
  // Every address @lvsd.test is delivered to one maildir, as the unprivileged user nobody.
  writeFileSync(join(dir, 'smtpd.conf'), [
    'table vusers { "@lvsd.test" = "nobody" }',
    'listen on 10.79.0.25 port 25 hostname mx.lvsd.test',
    `action "keep" maildir "${maildir}" user nobody virtual <vusers>`,
    'match from any for domain "lvsd.test" action "keep"',
  ].join('\n') + '\n');
  await mail.exec('mkdir', ['-p', maildir]);
  chmodSync(maildir, 0o777);
  await mail.exec('smtpd', ['-n', '-f', join(dir, 'smtpd.conf')]);
  smtpd = startSmtpd();
  await waitForPort(mail, 25);
  serve(rs1, '10.79.0.11');
  rs2Server = serve(rs2, '10.79.0.12');
  await waitForPort(rs2, 80);

  const config = join(dir, 'lvsd.yaml');
  writeFileSync(config, `node: { name: d1 }
api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }
stateFile: ${join(dir, 'state.json')}
dataplane: nftables
nftables: { table: lvsd, masquerade: false }
alerts:
  email:
    to: [alerts@lvsd.test, ops@lvsd.test]
    from: lvsd@lvsd.test
    smtpServer: 10.79.0.25
    connectTimeout: 2s
    helo: d1.lvsd.test
    queueSize: 2
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, advertInterval: 100ms, virtualIpaddresses: [10.79.0.100/24] }
virtualServers:
  - name: web
    address: 10.79.0.100
    port: 80
    quorum: 2
    healthCheck: { type: tcp, interval: 200ms, timeout: 500ms, rise: 1, fall: 1 }
    realServers: [{ address: 10.79.0.11 }, { address: 10.79.0.12 }]
`);
  lvsd = startRun(['--config', config], ['ip', 'netns', 'exec', director.name]);
  await lvsd.waitFor(/^running$/);
});

after(async () => {
  if (process.env.LVSD_TEST_DEBUG !== undefined) console.error(lvsd.lines.map((l) => `${l.msg} ${JSON.stringify(l)}`).join('\n'), received().map((m) => m.subject));
  if (lvsd.child.exitCode === null) {
    lvsd.child.kill('SIGTERM');
    await lvsd.exit;
  }
  for (const c of children) c.kill('SIGKILL');
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const RS2_DOWN = '[d1] Realserver [10.79.0.12]:tcp:80 of virtual server [10.79.0.100]:tcp:80 - DOWN';
const RS2_UP = '[d1] Realserver [10.79.0.12]:tcp:80 of virtual server [10.79.0.100]:tcp:80 - UP';
const VS_DOWN = '[d1] Virtualserver [10.79.0.100]:tcp:80 - DOWN';
const VS_UP = '[d1] Virtualserver [10.79.0.100]:tcp:80 - UP';

test('VRRP, real server and quorum alerts reach the SMTP server as keepalived words them', async () => {
  const master = await until('the MASTER mail', () => copies('[d1] VRRP Instance VI_1 - Entering MASTER state'));
  assert.deepEqual(master.map((m) => m.deliveredTo).sort(), ['alerts@lvsd.test', 'ops@lvsd.test'], 'one message, both recipients');
  for (const m of master) {
    assert.equal(m.from, 'lvsd@lvsd.test');
    assert.equal(m.to, 'alerts@lvsd.test, ops@lvsd.test');
    assert.equal(m.mailer, 'lvsd');
    assert.equal(m.body, '=> VRRP Instance is now owning VRRP VIPs <=');
  }

  await killed(rs2Server);
  const down = await until('the real server DOWN mail', () => copies(RS2_DOWN));
  assert.equal(down[0]?.body, '=> TCP CHECK failed on service <=');
  const lost = await until('the quorum DOWN mail', () => copies(VS_DOWN));
  assert.equal(lost[0]?.body, '=> Lost quorum 2+0=2 <= 1 <=');

  rs2Server = serve(rs2, '10.79.0.12');
  assert.equal((await until('the real server UP mail', () => copies(RS2_UP)))[0]?.body, '=> TCP CHECK succeed on service <=');
  assert.equal((await until('the quorum UP mail', () => copies(VS_UP)))[0]?.body, '=> Gained quorum 2+0=2 <= 2 <=');
  assert.equal(await metric('failed'), 0);
  assert.ok(await metric('sent') >= 5, 'sent counted');
});

test('a dead SMTP server: nothing waits for it, one log line per burst, a full queue drops, all counted', async () => {
  const count = (prefix: string): number => lvsd.lines.filter((l) => l.msg.startsWith(prefix)).length;
  /** rs2 down and up again `n` times, each transition seen in lvsd's log: 4 alerts per flap (real server and quorum). */
  const flap = async (n: number): Promise<void> => {
    const downs = count('real server down');
    const ups = count('real server up');
    for (let i = 1; i <= n; i++) {
      await killed(rs2Server);
      await until(`rs2 down (${i})`, () => (count('real server down') >= downs + i ? true : undefined));
      rs2Server = serve(rs2, '10.79.0.12');
      await until(`rs2 up (${i})`, () => (count('real server up') >= ups + i ? true : undefined));
    }
  };

  // Refused: smtpd stopped. Two flaps → eight alerts, each refused at once.
  await killed(smtpd);
  smtpd = null;
  await flap(2);
  await until('failures counted', async () => ((await metric('failed')) >= 4 ? true : undefined));
  assert.equal(count('mail alerts failing'), 1, 'one line for the whole burst');

  // Black-holed: smtpd back, but its port dropped. Each message now waits out the 2 s timeout, so three quick
  // flaps (twelve alerts) overflow the queue of 2 — and the checks go on as if no mail were sent.
  smtpd = startSmtpd();
  await waitForPort(mail, 25);
  await mail.exec('nft', ['-f', '-'], { input: 'table inet blackhole {\n chain input {\n  type filter hook input priority 0;\n  tcp dport 25 drop\n }\n}\n' });
  const downs = count('real server down');
  await flap(3);
  assert.equal(count('real server down'), downs + 3, 'every transition seen while the mail hung');
  await until('drops counted', async () => ((await metric('dropped')) > 0 ? true : undefined));
  assert.equal(count('mail alerts dropped'), 1, 'drops logged once until a message is sent');
  assert.equal(count('mail alerts failing'), 1, 'still the same burst: no new failing line');

  // The server answers again: the next alert is sent, and the end of the burst is logged with its count.
  await mail.exec('nft', ['delete', 'table', 'inet', 'blackhole']);
  await flap(1);
  const back = await lvsd.waitFor(/^mail alerts sent again/, 60_000);
  assert.ok(Number(back.failures) >= 4, JSON.stringify(back));
  assert.ok(await metric('sent') > 5, 'sent again');
});
