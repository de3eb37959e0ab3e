// The operator's day on the real lab (lab/lab.ts: two lvsd directors in network namespaces, VRRP between
// them, three nginx real servers, the client's traffic running throughout), in Debian chromium through
// the panel the lab exposes on the host. The directors read each other over TLS with peer tokens
// (lab/peering.ts), so d1's Cluster page shows both: VRRP state side by side, a real server drained on
// both (gone from both nftables tables, audited on d2 as admin@d1), a failover and its restore; then
// d1's config editor marks an error at the line lvsd names, and a diff is applied to the running d1;
// the graphs moved under the traffic and carry the failover as a mark. A screenshot of every page.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Lab, LAB, type TrafficStats } from '../../lab/lab.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { localRequest } from '../../daemon/api/local-client.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { labScenario, until } from '../support/lab-scenario.js';
import { ARTIFACTS, loggedIn, openBrowser, waitUntil } from './browser.js';
import { editorText, setEditorText } from './editor.js';

const SERVICE = `tcp:${LAB.vip}:80`;
const RS2 = `${LAB.realServers[1]}:80`;
const RS3 = `${LAB.realServers[2]}:80`;
let lab: Lab;
let browser: Browser;
let page: Page;
let traffic: { stop: () => Promise<TrafficStats> } | null = null;
const problems: string[] = [];
/** What before() set up, undone in reverse by after() (a failing before() leaves some of it unset). */
const cleanups: (() => Promise<unknown>)[] = [];
const scenario = labScenario(() => lab);
const shot = (name: string): Promise<Buffer> => page.screenshot({ path: join(ARTIFACTS, `lab-${name}.png`), fullPage: true });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const nftTable = async (d: string): Promise<string> => (await lab.director(d).ns.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout;
const audit = async (d: string): Promise<{ who: string; action: string; target: string }[]> =>
  (await localRequest<{ who: string; action: string; target: string }[]>(join(lab.director(d).dir, 'lvsd.sock'), 'GET', '/api/v1/audit')).body;
const badge = (instance: string, d: string): Promise<string> => page.getByTestId(`cell-${instance}-${d}`).locator('.badge').innerText();
const refresh = (): Promise<void> => page.getByRole('button', { name: 'Refresh' }).click();

before(async () => {
  requireRoot();
  requireCommands('nginx', 'nft', 'ip', 'openssl', 'chromium');
  const ports: [number, number] = [await freePort(), await freePort()];
  lab = await Lab.up({ advertInterval: '100ms', apiPorts: ports });
  cleanups.push(() => lab.down());
  await until('d1 to hold the VIP', async () => JSON.stringify(await lab.vipHolders()) === '["d1"]', 20_000);
  traffic = lab.traffic(2);
  cleanups.push(async () => { if (traffic !== null) await traffic.stop().catch(() => null); });
  browser = await openBrowser();
  cleanups.push(() => browser.close());
  page = await loggedIn(browser, `http://127.0.0.1:${ports[0]}`, 'admin', lab.adminPassword, problems);
});

after(async () => {
  for (const undo of cleanups.reverse()) await undo();
});

scenario('the Cluster page shows both real directors, read over TLS with the peer token', async () => {
  await page.getByRole('link', { name: 'Cluster' }).click();
  await page.getByRole('heading', { name: /Cluster\s*lab/ }).waitFor();
  await page.getByTestId('director-d1').getByText('(this one)').waitFor();
  await page.getByTestId('director-d2').getByText(/config [0-9a-f]{12}/).waitFor({ timeout: 15_000 });
  await page.getByTestId('director-d2').getByText(`https://${LAB.directors[1]}:9180`).waitFor();
  assert.equal(await page.getByText(/unreachable/).count(), 0, 'no director unreachable');
  await waitUntil(async () => (await badge('VI_WEB', 'd1')) === 'MASTER' && (await badge('VI_WEB', 'd2')) === 'BACKUP', 'd1 MASTER and d2 BACKUP side by side', 15_000);
  for (const rs of LAB.realServers) {
    for (const d of ['d1', 'd2']) await page.getByTestId(`cell-${rs}:80-${d}`).getByText('weight 1').waitFor();
  }
  // d2 read d1 as a peer, not as a user: its audit log has no login from d1
  assert.ok(!(await audit('d2')).some((e) => e.who === 'admin'), 'd2 saw no user login');
  await shot('01-cluster');
});

scenario('a real server drained on both directors leaves both nftables tables; d2 audits admin@d1', async () => {
  await page.getByTestId(`cluster-rs-${RS2}`).getByRole('button', { name: 'Drain on all' }).click();
  await page.getByRole('dialog').getByRole('button', { name: `Drain ${RS2}` }).click();
  for (const d of ['d1', 'd2']) await page.getByTestId(`cell-${RS2}-${d}`).getByText('weight 0').waitFor();
  for (const d of ['d1', 'd2']) await until(`${RS2} to leave ${d}'s nftables map`, async () => !(await nftTable(d)).includes(LAB.realServers[1]), 10_000);
  // the client's new requests no longer reach rs2
  const bodies: string[] = [];
  for (let i = 0; i < 9; i++) bodies.push((await lab.client.exec('curl', ['-s', '-m', '3', `http://${LAB.vip}/`])).stdout.trim());
  assert.ok(bodies.every((b) => b === 'rs1' || b === 'rs3'), `answers while rs2 is drained: ${bodies.join(' ')}`);
  assert.deepEqual((await audit('d2')).filter((e) => e.action === 'override.set').map((e) => e.who), ['admin@d1']);
  assert.ok((await audit('d1')).some((e) => e.action === 'cluster.forward.drain' && e.target.startsWith('d2: ')), 'd1 audits the forward to d2');
  await page.evaluate('window.scrollTo(0, 0)');
  await shot('02-drained-on-both');
  await page.getByTestId(`cluster-rs-${RS2}`).getByRole('button', { name: 'Enable on all' }).click();
  await page.getByRole('dialog').getByRole('button', { name: `Enable ${RS2}` }).click();
  for (const d of ['d1', 'd2']) await page.getByTestId(`cell-${RS2}-${d}`).getByText('weight 1').waitFor();
  for (const d of ['d1', 'd2']) await until(`${RS2} back in ${d}'s nftables map`, async () => (await nftTable(d)).includes(LAB.realServers[1]), 10_000);
});

scenario('fail over from the Cluster page: d2 takes the VIP and the page shows it; restore gives it back', async () => {
  await page.getByTestId('cell-VI_WEB-d1').getByRole('button', { name: 'Fail over' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Fail over VI_WEB' }).click();
  const took = await until('d2 to hold the VIP', async () => JSON.stringify(await lab.vipHolders()) === '["d2"]', 10_000);
  await waitUntil(async () => {
    await refresh();
    return (await badge('VI_WEB', 'd1')) === 'BACKUP' && (await badge('VI_WEB', 'd2')) === 'MASTER';
  }, 'the page to show d2 MASTER', 15_000);
  await page.getByTestId('cell-VI_WEB-d1').getByRole('button', { name: 'Restore' }).waitFor();
  await shot('03-failed-over');
  await page.getByTestId('cell-VI_WEB-d1').getByRole('button', { name: 'Restore' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore VI_WEB' }).click();
  await until('d1 to hold the VIP again', async () => JSON.stringify(await lab.vipHolders()) === '["d1"]', 10_000);
  assert.ok((await audit('d1')).some((e) => e.action.startsWith('vrrp.failover') || e.action.startsWith('failover')), `d1 audits the failover: ${JSON.stringify((await audit('d1')).map((e) => e.action))}`);
  assert.ok(took >= 0);
});

scenario('d1\'s config editor: an error marked at the line lvsd names, then a diff applied to the running director', async () => {
  const d1 = lab.director('d1');
  const running = readFileSync(d1.configPath, 'utf8');
  await page.getByRole('link', { name: 'Config' }).click();
  await waitUntil(async () => (await editorText(page)).includes('virtualServers'), 'the running config in the editor');
  // CodeMirror renders the lines in view (and a margin): the top of d1's file, as it is on disk
  const shown = await editorText(page);
  assert.ok(shown.split('\n').length > 20 && running.startsWith(shown), `the editor shows d1's file: ${shown}`);

  const bad = running.replace('virtualRouterId: 51', 'virtualRouterId: 300');
  const expected = loadConfigText(bad, d1.configPath);
  assert.ok(!expected.ok && expected.errors.length === 1, 'lvsd refuses VRID 300');
  const err = expected.errors[0];
  assert.ok(err !== undefined);
  await setEditorText(page, bad);
  const editor = page.getByTestId('config-editor');
  const marked = editor.locator('.cm-lintRange-error');
  await marked.first().waitFor();
  assert.equal(await marked.count(), 1);
  const lines = await editor.locator('.cm-content .cm-line').allInnerTexts();
  assert.equal(lines.findIndex((l) => l.includes('virtualRouterId: 300')) + 1, err.line, `the marker is on line ${err.line}`);
  assert.match(await marked.innerText(), /300/);
  // the paste leaves the view at the end of the file: the status line's link brings the marker into view
  await page.getByTestId('marker-count').getByRole('button', { name: `go to line ${err.line}:${err.col}` }).click();
  await marked.hover();
  await editor.locator('.cm-tooltip-lint').getByText(/virtualRouterId/).first().waitFor();
  await shot('04-editor-marker');

  const changed = running.replace(`{ address: ${LAB.realServers[2]}, port: 80, weight: 1 }`, `{ address: ${LAB.realServers[2]}, port: 80, weight: 3 }`);
  assert.notEqual(changed, running);
  await setEditorText(page, changed);
  await page.getByText('✓ lvsd finds no error').waitFor();
  await page.getByRole('button', { name: 'Diff' }).click();
  await page.getByTestId('config-diff').locator('.cm-changedLine', { hasText: 'weight: 3' }).waitFor();
  await shot('05-editor-diff');
  await page.getByRole('button', { name: 'Apply…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Apply' }).click();
  await page.getByText(/✓ Applied/).waitFor({ timeout: 20_000 });
  assert.equal(readFileSync(d1.configPath, 'utf8'), changed, 'the file on d1 is the applied text');
  const weights = async (): Promise<string> => {
    const status = await localRequest<{ virtualServices: { id: string; realServers: { id: string; weight: { configured: number; effective: number | null } }[] }[] }>(join(d1.dir, 'lvsd.sock'), 'GET', '/api/v1/status');
    return JSON.stringify(status.body.virtualServices.find((v) => v.id === SERVICE)?.realServers.map((r) => [r.id, r.weight.configured, r.weight.effective]));
  };
  await until('rs3 at weight 3 in d1\'s dataplane', async () => (await weights()).includes(`["${RS3}",3,3]`), 10_000).catch(async (e: unknown) => {
    throw new Error(`${String(e)}: ${await weights()}`);
  });
  await shot('06-editor-applied');
  // the Cluster page now flags the two directors' config as different, and shows rs3's weight on each
  await page.getByRole('link', { name: 'Cluster' }).click();
  await page.getByTestId(`cell-${RS3}-d1`).getByText('weight 3').waitFor({ timeout: 15_000 });
  await page.getByTestId(`cell-${RS3}-d2`).getByText('weight 1').waitFor();
  await page.getByTestId('differences').getByText(/config/).first().waitFor();
});

scenario('the graphs moved while the lab\'s traffic ran, with the failover marked', async () => {
  await page.getByRole('link', { name: 'Graphs' }).click();
  const cps = page.getByTestId('chart-cps');
  await cps.locator('canvas').waitFor();
  // lvsd samples every 10 s: wait for a rate above zero on the chart. (The lab's nftables dataplane counts
  // new connections per service, not bytes or packets: those charts stay empty here; docs/api.md.)
  await waitUntil(async () => Number(await cps.getAttribute('data-max')) > 0, 'a connection rate above zero', 60_000);
  // where nothing is counted the page says so, rather than draw a flat zero that reads as "no traffic"
  for (const id of ['bytes', 'packets']) await page.getByTestId(`chart-${id}`).getByText('Not counted by the nftables dataplane', { exact: false }).waitFor();
  const latency = page.getByTestId('chart-latency');
  await waitUntil(async () => Number(await latency.getAttribute('data-max')) > 0, 'the real servers\' health-check latency', 20_000);
  await page.getByTestId('marks').getByText(/VI_WEB: MASTER → BACKUP/).waitFor({ timeout: 15_000 });
  await shot('07-graphs');
});

scenario('every page of the panel renders on the real director without errors', async () => {
  const nav = page.getByRole('navigation').getByRole('link');
  const names = await nav.allInnerTexts();
  assert.ok(names.length >= 6, `the navigation: ${names.join(', ')}`);
  for (const name of names) {
    await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
    await page.waitForTimeout(1500);
    await shot(`page-${name.trim().toLowerCase().replace(/\W+/g, '-')}`);
  }
  const stats = await traffic?.stop();
  traffic = null;
  assert.ok(stats !== undefined && stats.ok > 0, 'the lab\'s traffic flowed');
  assert.deepEqual(problems, [], 'no page errors, CSP violations or external requests');
});
