// Operating the real lab the way an operator does: through the API of a running lvsd (drain a real
// server and see it leave the nftables map; restore it), `lvsd status` over the admin socket, and 100
// reloads with alternating configs under continuous traffic — no failed request, no VRRP transition.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { directorConfig, Lab, LAB } from '../../lab/lab.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { labScenario } from '../support/lab-scenario.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../daemon/cli/main.js', import.meta.url));
const PORT = 19281;
const SERVICE = `tcp:${LAB.vip}:80`;
let lab: Lab;
const scenario = labScenario(() => lab);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
const nftTable = async (): Promise<string> => (await lab.director('d1').ns.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout;

before(async () => {
  requireRoot();
  requireCommands('nginx', 'nft', 'conntrack', 'ip');
  lab = await Lab.up({ advertInterval: '100ms', apiPorts: [PORT, 0] });
  await until('d1 to hold the VIP', async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
});

after(async () => {
  await lab.down();
});

/** A second VRRP instance (its own VRID and VIP) that reload tests add to d1's vrrp.instances. */
const EXTRA_INSTANCE = `    - name: VI_EXTRA
      interface: eth0
      virtualRouterId: 61
      priority: 120
      version: 3
      advertInterval: 100ms
      virtualIpaddresses:
        - 10.77.0.101/24
`;

scenario('drain through the API of the running director: the real server leaves the dataplane, then returns', async () => {
  const base = `http://127.0.0.1:${PORT}`;
  const login = await fetch(`${base}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'admin', password: lab.adminPassword }),
  });
  assert.equal(login.status, 200);
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const headers = { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken };
  const rs = `${LAB.realServers[0]}:80`;
  const url = `${base}/api/v1/services/${encodeURIComponent(SERVICE)}/real-servers/${encodeURIComponent(rs)}/override`;

  assert.ok((await nftTable()).includes(LAB.realServers[0]));
  const drained = await fetch(url, { method: 'PUT', headers, body: JSON.stringify({ drain: true }) });
  assert.equal(drained.status, 200, await drained.text());
  await until('rs1 to leave the nftables map', async () => !(await nftTable()).includes(LAB.realServers[0]), 5_000);

  const status = (await (await fetch(`${base}/api/v1/status`, { headers: { cookie } })).json()) as {
    virtualServices: { id: string; realServers: { id: string; weight: { effective: number | null }; override: { drain?: boolean } | null }[] }[];
  };
  const shown = status.virtualServices.find((v) => v.id === SERVICE)?.realServers.find((r) => r.id === rs);
  assert.deepEqual(shown?.override, { drain: true });

  // Unknown real servers and bad weights are refused with a clear 4xx and change nothing.
  const unknown = await fetch(`${base}/api/v1/services/${encodeURIComponent(SERVICE)}/real-servers/10.9.9.9%3A80/override`, { method: 'PUT', headers, body: JSON.stringify({ drain: true }) });
  assert.equal(unknown.status, 404);
  const badWeight = await fetch(url, { method: 'PUT', headers, body: JSON.stringify({ weight: 70000 }) });
  assert.equal(badWeight.status, 400);

  const enabled = await fetch(url, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrfToken } });
  assert.equal(enabled.status, 200, await enabled.text());
  await until('rs1 to come back', async () => (await nftTable()).includes(LAB.realServers[0]), 5_000);
});

scenario('lvsd status over the admin socket shows this director as MASTER with its real servers', async () => {
  const { stdout } = await run(process.execPath, [BIN, 'status', '--config', lab.director('d1').configPath]);
  assert.match(stdout, /^node d1 · lvsd /m);
  assert.match(stdout, /^dataplane nftables /m);
  assert.match(stdout, /^ {2}VI_WEB +MASTER +eth0 vrid 51 v3/m);
  // ipvsadm's columns (Forward, Weight, ActiveConn, InActConn), then lvsd's Health.
  for (const a of LAB.realServers) assert.match(stdout, new RegExp(`^ {2}-> ${a.replace(/\./g, '\\.')}:80 +Masq +\\d+ +\\d+ +\\d+ +UP `, 'm'));
});

scenario('lvsd reload and lvsd user add talk to the running director over its admin socket', async (t) => {
  const d1 = lab.director('d1');
  const original = readFileSync(d1.configPath, 'utf8');
  t.after(() => {
    writeFileSync(d1.configPath, original);
  });
  writeFileSync(d1.configPath, original.replace(`{ address: ${LAB.realServers[1]}, port: 80, weight: 1 }`, `{ address: ${LAB.realServers[1]}, port: 80, weight: 4 }`));
  const reloaded = await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]);
  assert.match(reloaded.stdout, new RegExp(`^changed realServer tcp:${LAB.vip.replace(/\./g, '\\.')}:80/${(LAB.realServers[1] as string).replace(/\./g, '\\.')}:80: weight$`, 'm'));
  // A broken file is refused here, with its place, and nothing reaches the daemon.
  writeFileSync(d1.configPath, original.replace('scheduler: rr', 'scheduler: rrr'));
  const refused = await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]).catch((e: unknown) => e as { code: number; stderr: string });
  assert.ok('code' in refused && refused.code === 1);
  assert.match(refused.stderr, /lvsd\.yaml:\d+:\d+: virtualServers\[0\]\.scheduler: /);
  writeFileSync(d1.configPath, original);
  await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]);

  const add = execFile(process.execPath, [BIN, 'user', 'add', 'bob', '--role', 'viewer', '--config', d1.configPath]);
  add.stdin?.end('bobs-long-password\n');
  const added = await new Promise<string>((resolve, reject) => {
    let out = '';
    add.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
    });
    add.once('exit', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`user add exited ${String(code)}`));
    });
  });
  assert.match(added, /user bob \(viewer\) added through the running lvsd/);
  const login = await fetch(`http://127.0.0.1:${PORT}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bob', password: 'bobs-long-password' }),
  });
  assert.equal(login.status, 200);
  assert.equal(((await login.json()) as { role: string }).role, 'viewer');
});

scenario('100 reloads with alternating configs under continuous traffic: no failed request, no VRRP transition', async (t) => {
  const d1 = lab.director('d1');
  const log = (): string => readFileSync(join(d1.dir, 'lvsd.log'), 'utf8');
  const transitions = (): number => log().split('\n').filter((l) => l.includes('"msg":"Entering ')).length;
  const reloadsDone = (): number => log().split('\n').filter((l) => l.includes('"msg":"reload done: ')).length;
  const opts = { dataplane: 'nftables' as const, advertInterval: '100ms', checkInterval: '1s' };
  const original = readFileSync(d1.configPath, 'utf8');
  // A: all three real servers, rs1 weighted 3; B: rs3 removed, and a second virtual service on port 8080.
  const a = directorConfig(0, opts, d1.dir, LAB.realServers, d1.peering).replace(`{ address: ${LAB.realServers[0]}, port: 80, weight: 1 }`, `{ address: ${LAB.realServers[0]}, port: 80, weight: 3 }`);
  const b = `${directorConfig(0, opts, d1.dir, LAB.realServers.slice(0, 2), d1.peering)}  - name: alt
    address: ${LAB.vip}
    port: 8080
    protocol: tcp
    scheduler: rr
    method: nat
    realServers:
      - { address: ${LAB.realServers[0]}, port: 80 }
`;
  const before = transitions();
  const traffic = lab.traffic(4);
  await sleep(500);
  for (let i = 0; i < 100; i++) {
    const done = reloadsDone();
    writeFileSync(d1.configPath, i % 2 === 0 ? b : a);
    d1.process?.kill('SIGHUP');
    await until(`reload ${i + 1}`, () => Promise.resolve(reloadsDone() > done), 10_000);
  }
  await sleep(500);
  const stats = await traffic.stop();
  t.diagnostic(`100 reloads: sent ${stats.sent}, failed ${stats.failed}, longest gap ${stats.longestGapMs} ms, by server ${JSON.stringify(stats.byServer)}`);
  assert.equal(stats.failed, 0, `${stats.failed} of ${stats.sent} failed: ${JSON.stringify(stats.failures)}`);
  assert.equal(transitions(), before, 'no VRRP transition');
  assert.deepEqual(Object.keys(stats.byServer).sort(), ['rs1', 'rs2', 'rs3']);
  // The 100th reload applied A: every real server, no second service.
  const table = await nftTable();
  assert.ok(!table.includes('8080') && LAB.realServers.every((r) => table.includes(r)), table);
  writeFileSync(d1.configPath, original);
  d1.process?.kill('SIGHUP');
});

scenario('a reload that adds a VRRP instance starts it while the running one stays MASTER (no transition); removing it releases its VIP', async () => {
  const d1 = lab.director('d1');
  const log = (): string[] => readFileSync(join(d1.dir, 'lvsd.log'), 'utf8').split('\n');
  const entering = (instance: string): number => log().filter((l) => l.includes('"msg":"Entering ') && l.includes(`"instance":"${instance}"`)).length;
  const reloadsDone = (): number => log().filter((l) => l.includes('"msg":"reload done: ')).length;
  const eth0 = async (): Promise<string> => (await d1.ns.exec('ip', ['-o', 'addr', 'show', 'dev', 'eth0'])).stdout;
  const reload = async (text: string): Promise<void> => {
    const done = reloadsDone();
    writeFileSync(d1.configPath, text);
    d1.process?.kill('SIGHUP');
    await until('the reload', () => Promise.resolve(reloadsDone() > done), 10_000);
  };
  // The previous test's last reload may still be in flight.
  await sleep(1000);
  await until('d1 to hold the VIP', async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
  const original = readFileSync(d1.configPath, 'utf8');
  const withExtra = original.replace('virtualServers:\n', `${EXTRA_INSTANCE}virtualServers:\n`);
  assert.notEqual(withExtra, original);
  const webBefore = entering('VI_WEB');
  await reload(withExtra);
  await until('VI_EXTRA to become MASTER', () => Promise.resolve(entering('VI_EXTRA') >= 2 && log().some((l) => l.includes('"instance":"VI_EXTRA"') && l.includes('"msg":"Entering MASTER'))), 10_000);
  await until('10.77.0.101 on d1', async () => (await eth0()).includes('10.77.0.101/24'), 5_000);
  assert.equal(entering('VI_WEB'), webBefore, 'VI_WEB made no transition');
  assert.deepEqual(await lab.vipHolders(), ['d1']);

  await reload(original);
  await until('10.77.0.101 released', async () => !(await eth0()).includes('10.77.0.101/24'), 5_000);
  assert.ok(log().some((l) => l.includes('"instance":"VI_EXTRA"') && l.includes('"msg":"Entering INIT')), 'VI_EXTRA stopped');
  await sleep(500);
  assert.equal(entering('VI_WEB'), webBefore, 'VI_WEB made no transition');
  assert.deepEqual(await lab.vipHolders(), ['d1']);
});

scenario('a reload that fails half-way (VRRP applied, then nftables refuses a DR service) is rolled back while traffic flows, and reported', async (t) => {
  const d1 = lab.director('d1');
  const logLines = (): string[] => readFileSync(join(d1.dir, 'lvsd.log'), 'utf8').split('\n').filter(Boolean);
  const entering = (instance: string): number => logLines().filter((l) => l.includes('"msg":"Entering ') && l.includes(`"instance":"${instance}"`)).length;
  const eth0 = async (): Promise<string> => (await d1.ns.exec('ip', ['-o', 'addr', 'show', 'dev', 'eth0'])).stdout;
  const statusJson = async () =>
    JSON.parse((await run(process.execPath, [BIN, 'status', '--json', '--socket', join(d1.dir, 'lvsd.sock')])).stdout) as {
      vrrp: { name: string; state: string; basePriority: number }[];
      virtualServices: { id: string }[];
      config: { hash: string; lastReload: { ok: boolean; message: string; by: string } | null };
    };
  await sleep(1000); // the previous test's last reload may still be in flight
  await until('d1 to hold the VIP', async () => JSON.stringify(await lab.vipHolders()) === '["d1"]');
  const original = readFileSync(d1.configPath, 'utf8');
  t.after(() => {
    writeFileSync(d1.configPath, original);
  });
  const hashBefore = (await statusJson()).config.hash;
  // Valid (check-config accepts it), but half of it cannot be applied here: the VRRP part (VI_WEB's priority,
  // a new instance VI_EXTRA) applies first, then nftables refuses direct routing, which only IPVS does.
  const failing = `${original
    .replace('priority: 150', 'priority: 140')
    .replace('virtualServers:\n', `${EXTRA_INSTANCE}virtualServers:\n`)}  - name: direct
    address: ${LAB.vip}
    port: 8080
    protocol: tcp
    scheduler: rr
    method: dr
    realServers:
      - { address: ${LAB.realServers[0]}, port: 8080 }
`;
  writeFileSync(d1.configPath, failing);
  await run(process.execPath, [BIN, 'check-config', d1.configPath]);
  const webBefore = entering('VI_WEB');
  const traffic = lab.traffic(4);
  await sleep(500);

  // Through the API (`lvsd reload` → POST /api/v1/config/reload): refused with the part and the reason, exit 1.
  const refused = await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]).catch((e: unknown) => e as { code: number; stderr: string });
  assert.ok('code' in refused && refused.code === 1, JSON.stringify(refused));
  const why = `reload failed at dataplane: nftables: tcp:${LAB.vip}:8080 → ${LAB.realServers[0]}:8080: DR forwarding needs the IPVS dataplane; nftables forwards by NAT only; rolled back dataplane, vrrp, health; running the previous config`;
  assert.equal(refused.stderr.trim(), `${d1.configPath}: not reloaded: ${why}`);

  // The same file on SIGHUP: the same failure in the log, then the running config kept.
  const sighupFailures = (): number => logLines().filter((l) => l.includes('"failedPart":') && l.includes('"by":"SIGHUP"')).length;
  const failuresBefore = sighupFailures();
  d1.process?.kill('SIGHUP');
  await until('the SIGHUP reload to fail', () => Promise.resolve(sighupFailures() > failuresBefore), 10_000);
  assert.ok(logLines().some((l) => l.includes(`"msg":${JSON.stringify(why)}`) && l.includes('"by":"SIGHUP"') && l.includes('"failedPart":"dataplane"')));
  // The VRRP part really ran and really went back: VI_EXTRA was added, then removed again.
  const reconfigured = logLines().filter((l) => l.includes('"msg":"VRRP reconfigured"')).map((l) => JSON.parse(l) as { added: string[]; removed: string[] });
  assert.ok(reconfigured.some((r) => r.added.includes('VI_EXTRA')) && reconfigured.some((r) => r.removed.includes('VI_EXTRA')), JSON.stringify(reconfigured));

  await sleep(1000);
  const stats = await traffic.stop();
  t.diagnostic(`failed reloads under traffic: sent ${stats.sent}, failed ${stats.failed}, by server ${JSON.stringify(stats.byServer)}`);
  assert.equal(stats.failed, 0, `${stats.failed} of ${stats.sent} failed: ${JSON.stringify(stats.failures)}`);
  assert.deepEqual(Object.keys(stats.byServer).sort(), ['rs1', 'rs2', 'rs3']);

  // Everything is as before: VI_WEB MASTER at 150 with no transition, no VI_EXTRA, no 10.77.0.101, no 8080 in nft.
  const s = await statusJson();
  assert.deepEqual(s.vrrp.map((i) => [i.name, i.state, i.basePriority]), [['VI_WEB', 'MASTER', 150]]);
  assert.deepEqual(s.virtualServices.map((v) => v.id), [SERVICE]);
  assert.equal(s.config.hash, hashBefore);
  assert.equal(s.config.lastReload?.ok, false);
  assert.equal(s.config.lastReload.message, why);
  assert.equal(s.config.lastReload.by, 'SIGHUP');
  assert.equal(entering('VI_WEB'), webBefore, 'VI_WEB made no transition');
  assert.ok(!(await eth0()).includes('10.77.0.101'), 'VI_EXTRA’s VIP is not held');
  assert.ok(!(await nftTable()).includes('8080'));
  const human = await run(process.execPath, [BIN, 'status', '--config', d1.configPath]);
  assert.ok(human.stdout.includes(`last reload FAILED: ${why}`), human.stdout);

  // A refused SIGHUP (invalid file) is recorded too.
  writeFileSync(d1.configPath, original.replace('scheduler: rr', 'scheduler: rrr'));
  d1.process?.kill('SIGHUP');
  await until('the refusal in lastReload', async () => (await statusJson()).config.lastReload?.message.startsWith('refused: config is invalid (1 error): ') === true, 10_000);

  // And the fixed file reloads cleanly.
  writeFileSync(d1.configPath, original.replace('priority: 150', 'priority: 140'));
  const ok = await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]);
  assert.match(ok.stdout, /^changed instance VI_WEB: priority$/m);
  assert.equal((await statusJson()).config.lastReload?.ok, true);
  writeFileSync(d1.configPath, original);
  await run(process.execPath, [BIN, 'reload', '--config', d1.configPath]);
});
