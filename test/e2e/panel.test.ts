// The panel in Debian chromium, driven like an operator: log in with the keyboard, see a VRRP instance
// MASTER, drain a real server and watch its weight change in the (fake) dataplane and on screen, apply a
// config and roll it back. Screenshots go to test-artifacts/ (laptop and phone sizes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApi, DEFAULT_WEBUI_DIR } from '../../daemon/api/server.js';
import { openStore } from '../../daemon/state/store.js';
import { FakeDirector, FAKE_CONFIG } from '../support/fake-director.js';
import { requireCommands } from '../support/prereq.js';
import { editorText, setEditorText } from './editor.js';

async function waitUntil(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'e2e');
const WEB = 'tcp:192.168.77.100:80';

test('panel: log in, MASTER badge, drain → dataplane weight 0, apply + roll back a config', { timeout: 110_000 }, async (t) => {
  requireCommands('chromium');
  const chromiumPath = '/usr/bin/chromium';
  assert.ok(existsSync(join(DEFAULT_WEBUI_DIR, 'index.html')), `the panel is not built: run "npx vite build webui" first (looked in ${DEFAULT_WEBUI_DIR})`);
  mkdirSync(ARTIFACTS, { recursive: true });

  const dir = await mkdtemp(join(tmpdir(), 'lvsd-e2e-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'));
  await store.addUser('alice', 'alice password', 'admin', 'e2e');
  const director = new FakeDirector();
  // a little history and traffic so the pages have something to show
  director.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED 10.0.1.13:80');
  director.transition('VI_2', 'MASTER', 'master down timer expired');
  director.transition('VI_2', 'BACKUP', 'higher priority advert from 10.0.0.2');
  for (let i = 0; i < 5; i++) director.tick(1);
  const ticker = setInterval(() => { director.tick(1); }, 500);
  t.after(() => { clearInterval(ticker); });

  const app = await buildApi({ director, store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());

  const browser: Browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page: Page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/401 \(Unauthorized\)/.test(m.text())) problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('data:')) problems.push(`external request: ${r.url()}`); });
  page.setDefaultTimeout(10_000);

  // ---- log in with the keyboard only
  await page.goto(url);
  await page.getByLabel('User').waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '01-login.png') });
  await page.getByLabel('User').focus();
  await page.keyboard.type('alice');
  await page.keyboard.press('Tab');
  await page.keyboard.type('alice password');
  await page.keyboard.press('Enter');

  // ---- overview: VI_1 is MASTER
  const vi1 = page.getByTestId('instance-VI_1');
  await vi1.getByTestId('vrrp-state').filter({ hasText: 'MASTER' }).waitFor();
  assert.equal(await page.getByTestId('instance-VI_2').getByTestId('vrrp-state').textContent(), 'BACKUP');
  await page.getByText('higher priority advert from 10.0.0.2').first().waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '02-overview.png'), fullPage: true });

  // a transition in the director shows up live (SSE), no reload
  director.transition('VI_2', 'MASTER', 'master down timer expired');
  await page.getByTestId('instance-VI_2').getByTestId('vrrp-state').filter({ hasText: 'MASTER' }).waitFor({ timeout: 5000 });

  // ---- services: drain 10.0.1.11:80
  await page.getByRole('link', { name: 'Services' }).click();
  const row = page.getByTestId('rs-10.0.1.11:80');
  assert.equal((await row.getByTestId('weight-effective').textContent())?.trim(), '10');
  assert.equal(director.dataplane().get(`${WEB}/10.0.1.11:80`), 10);
  await row.getByRole('button', { name: 'Drain 10.0.1.11:80' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('Drain 10.0.1.11:80 in web?').waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '03-confirm-drain.png') });
  const clicked = Date.now();
  await dialog.getByRole('button', { name: 'Drain' }).click();
  await row.getByTestId('weight-effective').filter({ hasText: /^0$/ }).waitFor({ timeout: 5000 });
  const shownAfterMs = Date.now() - clicked;
  t.diagnostic(`drain visible in the panel ${shownAfterMs} ms after confirming`);
  assert.equal(director.dataplane().get(`${WEB}/10.0.1.11:80`), 0, 'the dataplane holds weight 0');
  await row.getByText('drained').waitFor();
  assert.deepEqual(store.getOverride({ service: WEB, realServer: '10.0.1.11:80' }), { drain: true });
  await page.waitForTimeout(1200); // let the rate chart draw a few more points
  await page.screenshot({ path: join(ARTIFACTS, '04-services-drained.png'), fullPage: true });

  // ---- config: edit, diff, apply, roll back
  await page.getByRole('link', { name: 'Config' }).click();
  const editor = page.getByLabel('Config (YAML)');
  await waitUntil(async () => (await editorText(page)).includes('virtualServers'), 'the running config in the editor');
  await setEditorText(page, FAKE_CONFIG.replace('priority: 150', 'priority: 120'));
  await page.getByRole('button', { name: 'Diff' }).click();
  await page.getByText('priority 150 → 120').waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '05-config-diff.png'), fullPage: true });
  await page.getByRole('button', { name: 'Apply…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Apply' }).click();
  await page.getByText(/✓ Applied/).waitFor();
  assert.equal(director.snapshot().vrrp[0]?.basePriority, 120);
  const applied = director.snapshot().config.hash;
  await page.getByRole('button', { name: 'Roll back…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
  await page.getByText(/✓ Rolled back/).waitFor();
  assert.equal(director.snapshot().vrrp[0]?.basePriority, 150, 'rolled back to the original config');
  assert.notEqual(director.snapshot().config.hash, applied);
  await waitUntil(async () => (await editorText(page)) === FAKE_CONFIG.trimEnd(), 'the rolled-back config in the editor');
  await editor.waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '06-config-rolled-back.png'), fullPage: true });

  // ---- events and audit show who did what
  await page.getByRole('link', { name: 'Audit' }).click();
  await page.getByText('config.rollback').waitFor();
  await page.getByText('override.set').waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '07-audit.png'), fullPage: true });
  await page.getByRole('link', { name: 'Events' }).click();
  await page.getByText(/VI_2: BACKUP → MASTER/).first().waitFor();
  await page.screenshot({ path: join(ARTIFACTS, '08-events.png'), fullPage: true });

  // ---- users: add an operator
  await page.getByRole('link', { name: 'Users' }).click();
  await page.getByLabel('Name').fill('bob');
  await page.getByLabel('Password').fill('bob password');
  await page.locator('#add-role').selectOption('operator');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('rowheader', { name: 'bob' }).waitFor();
  assert.equal(store.getUser('bob')?.role, 'operator');
  await page.screenshot({ path: join(ARTIFACTS, '09-users.png'), fullPage: true });

  // ---- a phone
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const cookies = await context.cookies();
  await phone.addCookies(cookies);
  const p2 = await phone.newPage();
  p2.on('pageerror', (e) => problems.push(`phone page error: ${e.message}`));
  await p2.goto(`${url}/#/overview`);
  await p2.getByTestId('instance-VI_1').getByTestId('vrrp-state').filter({ hasText: 'MASTER' }).waitFor();
  await p2.screenshot({ path: join(ARTIFACTS, '10-phone-overview.png'), fullPage: true });
  await p2.goto(`${url}/#/services`);
  await p2.getByTestId('rs-10.0.1.11:80').waitFor();
  // a function, not a string: the panel's CSP forbids eval. (Typed by hand: this file has no DOM library.)
  const overflow = await p2.evaluate(() => {
    const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return g.document.documentElement.scrollWidth - g.innerWidth;
  });
  assert.ok(overflow <= 1, `no sideways scrolling on a phone (overflow ${overflow}px)`);
  await p2.screenshot({ path: join(ARTIFACTS, '11-phone-services.png'), fullPage: true });
  await phone.close();

  assert.deepEqual(problems, [], 'no page errors, CSP violations or external requests');
});
