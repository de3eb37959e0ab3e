// The panel's BGP withdraw in Debian chromium, on the FakeDirector (which announces two prefixes): an
// operator withdraws one prefix with a confirmation, sees it WITHDRAWN with a Restore button, and the
// audit log has it; a viewer sees the prefixes and no button.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApi } from '../../daemon/api/server.js';
import { openStore } from '../../daemon/state/store.js';
import { FakeDirector } from '../support/fake-director.js';
import { ARTIFACTS, loggedIn, openBrowser } from './browser.js';

const VIP = '192.0.2.10/32';
const NET = '198.51.100.0/24';

test('panel: withdraw one BGP prefix (operator, confirmed, audited), restore it; a viewer has no button', { timeout: 90_000 }, async (t) => {
  const browser = await openBrowser();
  t.after(() => browser.close());
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-e2e-bgp-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'));
  await store.addUser('alice', 'alice password', 'admin', 'e2e'); // with no admin the panel asks for the bootstrap token
  await store.addUser('otto', 'otto password', 'operator', 'e2e');
  await store.addUser('vera', 'vera password', 'viewer', 'e2e');
  const director = new FakeDirector();
  director.bgpPrefixes = [VIP, NET];
  const app = await buildApi({ director, store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const problems: string[] = [];

  const page = await loggedIn(browser, url, 'otto', 'otto password', problems);
  const row = page.getByTestId(`bgp-${NET}`);
  await row.getByText('ANNOUNCED', { exact: true }).waitFor();
  await row.getByRole('button', { name: `Withdraw ${NET}` }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText(`Withdraw ${NET}?`).waitFor();
  await dialog.getByRole('button', { name: 'Withdraw' }).click();
  await row.getByText('WITHDRAWN', { exact: true }).waitFor({ timeout: 5000 });
  await page.getByText(`${NET}: withdrawn by otto`).waitFor();
  await row.getByRole('button', { name: `Restore ${NET}` }).waitFor();
  assert.equal(await page.getByTestId(`bgp-${VIP}`).getByText('ANNOUNCED', { exact: true }).count(), 1, 'only the one prefix');
  assert.deepEqual(store.auditLog({ action: 'bgp' }).map((e) => [e.action, e.who, e.target]), [['bgp.withdraw', 'otto', NET]]);
  await page.screenshot({ path: join(ARTIFACTS, 'bgp-withdrawn.png'), fullPage: true });

  // Cancel changes nothing; Restore confirmed announces again.
  await row.getByRole('button', { name: `Restore ${NET}` }).click();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(director.calls.filter((c) => c.startsWith('forceBgp')).length, 1, 'a cancelled restore sent nothing');
  await row.getByRole('button', { name: `Restore ${NET}` }).click();
  await dialog.getByRole('button', { name: 'Restore' }).click();
  await row.getByText('ANNOUNCED', { exact: true }).waitFor({ timeout: 5000 });

  const viewer = await loggedIn(browser, url, 'vera', 'vera password', problems);
  await viewer.getByTestId(`bgp-${NET}`).getByText('ANNOUNCED', { exact: true }).waitFor();
  assert.equal(await viewer.getByTestId('bgp').getByRole('button').count(), 0, 'a viewer sees no Withdraw / Restore');
  assert.deepEqual(problems, []);
});
