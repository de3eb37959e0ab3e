// The graphs page in Debian chromium: while the (fake) dataplane carries traffic, lvsd's history ring
// samples it, and the charts gain points and show a rate above zero; a VRRP transition shows as a mark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApi } from '../../daemon/api/server.js';
import { openStore } from '../../daemon/state/store.js';
import { FakeDirector } from '../support/fake-director.js';
import { ARTIFACTS, loggedIn, openBrowser, waitUntil } from './browser.js';

test('graphs: the charts move while traffic runs; a VRRP transition is marked', { timeout: 90_000 }, async (t) => {
  const browser = await openBrowser();
  t.after(() => browser.close());
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-e2e-graphs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'));
  await store.addUser('alice', 'alice password', 'admin', 'e2e'); // with no admin the panel asks for the bootstrap token
  await store.addUser('vera', 'vera password', 'viewer', 'e2e');
  const director = new FakeDirector();
  director.tick(1);
  const ticker = setInterval(() => { director.tick(1); }, 250);
  t.after(() => { clearInterval(ticker); });
  // a short period so the test sees several samples; the page polls once per period (at least 1 s)
  const app = await buildApi({ director, store, historyPeriodMs: 500 });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());

  const problems: string[] = [];
  const page = await loggedIn(browser, url, 'vera', 'vera password', problems);
  await page.getByRole('link', { name: 'Graphs' }).click();
  const cps = page.getByTestId('chart-cps');
  await cps.locator('canvas').waitFor();
  const points = async (): Promise<number> => Number(await cps.getAttribute('data-points'));
  await waitUntil(async () => (await points()) >= 3, 'three connection-rate points', 20_000);
  const before = await points();
  director.transition('VI_1', 'BACKUP', 'higher priority advert from 10.0.0.2');
  await waitUntil(async () => (await points()) > before + 2, 'the chart to gain points while traffic runs', 20_000);
  assert.ok(Number(await cps.getAttribute('data-max')) > 0, 'a connection rate above zero');
  await page.getByTestId('marks').getByText('VI_1: MASTER → BACKUP').waitFor({ timeout: 15_000 });
  for (const id of ['active', 'bytes', 'packets', 'latency']) await page.getByTestId(`chart-${id}`).locator('canvas').waitFor();
  assert.ok(Number(await page.getByTestId('chart-bytes').getAttribute('data-max')) > 0, 'bytes/s above zero');
  await page.screenshot({ path: join(ARTIFACTS, 'graphs-01.png'), fullPage: true });

  // another virtual server: the charts follow the choice
  await page.getByLabel('Virtual server').selectOption({ index: 1 });
  await waitUntil(async () => (await points()) >= 3, 'the second service\'s points', 20_000);
  await page.screenshot({ path: join(ARTIFACTS, 'graphs-02-dns.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no page errors, CSP violations or external requests');
});
