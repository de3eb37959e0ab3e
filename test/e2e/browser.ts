// What every browser test starts with: Debian chromium (a missing one fails loudly), a page that records
// page errors, console errors (CSP violations among them) and any request leaving the panel, and a login.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEFAULT_WEBUI_DIR } from '../../daemon/api/server.js';
import { requireCommands } from '../support/prereq.js';

export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'e2e');

export async function openBrowser(): Promise<Browser> {
  requireCommands('chromium');
  assert.ok(existsSync(join(DEFAULT_WEBUI_DIR, 'index.html')), `the panel is not built: run "npx vite build webui" first (looked in ${DEFAULT_WEBUI_DIR})`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A logged-in page on `url`; `problems` collects what must stay empty. */
export async function loggedIn(browser: Browser, url: string, user: string, password: string, problems: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/401 \(Unauthorized\)/.test(m.text())) problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('data:')) problems.push(`external request: ${r.url()}`); });
  page.setDefaultTimeout(10_000);
  await page.goto(url);
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor().catch(async (e: unknown) => { await page.screenshot({ path: join(ARTIFACTS, 'login-failed.png') }); throw e; });
  return page;
}

export async function waitUntil(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
