// The Cluster page in Debian chromium: two directors (each an API over its own fake director) and a third
// peer that is down. Logged in on lb1, the operator sees lb1 and lb2 side by side — lb2 read through its API
// with lb1's peer token — the down peer as unreachable with why, and the differences flagged where they are:
// a real server down on lb2 only, and both directors MASTER of VRID 51.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApi } from '../../daemon/api/server.js';
import { openStore } from '../../daemon/state/store.js';
import { newPeerToken, peerTokenSha256 } from '../../daemon/api/cluster/peer-token.js';
import { FakeDirector, FAKE_CONFIG } from '../support/fake-director.js';
import { ARTIFACTS, loggedIn, openBrowser } from './browser.js';

const WEB = 'tcp:192.168.77.100:80';
const configOf = (node: string, cluster: string): string => `${FAKE_CONFIG.replace('name: director-1', `name: ${node}`)}cluster:\n  name: pair\n${cluster}`;

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

test('cluster page: two directors side by side, a dead peer unreachable, differences highlighted', { timeout: 90_000 }, async (t) => {
  const browser = await openBrowser();
  t.after(() => browser.close());
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-e2e-cluster-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const token = newPeerToken();
  const tokenFile = join(dir, 'peer-lb2.token');
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });

  const lb2Store = (await openStore(join(dir, 'lb2.json'))).store;
  const lb2 = new FakeDirector({ configText: configOf('lb2', `  peers:\n    - { name: lb1, url: "http://127.0.0.1:1", tokenFile: /nonexistent, acceptTokenSha256: ${peerTokenSha256(token)}, acceptActions: true }\n`) });
  lb2.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED 10.0.1.13:80');
  const lb2App = await buildApi({ director: lb2, store: lb2Store });
  const lb2Url = await lb2App.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => lb2App.close());

  const { store } = await openStore(join(dir, 'lb1.json'));
  await store.addUser('alice', 'alice password', 'admin', 'e2e');
  await store.addUser('vera', 'vera password', 'viewer', 'e2e');
  const dead = await closedPort();
  const lb1 = new FakeDirector({ configText: configOf('lb1', `  peers:\n    - { name: lb2, url: "${lb2Url}", tokenFile: ${tokenFile} }\n    - { name: lb3, url: "http://127.0.0.1:${dead}", tokenFile: ${tokenFile} }\n`) });
  lb1.setHealth(WEB, '10.0.1.13:80', true);
  const app = await buildApi({ director: lb1, store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());

  const problems: string[] = [];
  const page = await loggedIn(browser, url, 'vera', 'vera password', problems);
  await page.getByRole('link', { name: 'Cluster' }).click();
  await page.getByRole('heading', { name: /Cluster\s*pair/ }).waitFor();
  await page.getByTestId('director-lb1').getByText('(this one)').waitFor();
  await page.getByTestId('director-lb2').getByText(/config [0-9a-f]{12}/).waitFor();
  await page.getByTestId('director-lb3').getByText(/unreachable: .*ECONNREFUSED/).waitFor();

  // both directors' VI_1 shown MASTER, and the cells flagged
  for (const n of ['lb1', 'lb2']) {
    const cell = page.getByTestId(`cell-VI_1-${n}`);
    assert.equal(await cell.locator('.badge').innerText(), 'MASTER');
    assert.equal(await cell.getAttribute('data-differs'), 'yes', `VI_1 on ${n} is flagged`);
  }
  // the real server down on lb2 and up on lb1: flagged; one that agrees: not
  assert.equal(await page.getByTestId('cell-10.0.1.13:80-lb2').innerText().then((s) => /down/i.test(s)), true);
  assert.equal(await page.getByTestId('cell-10.0.1.13:80-lb2').getAttribute('data-differs'), 'yes');
  assert.equal(await page.getByTestId('cell-10.0.1.11:80-lb2').getAttribute('data-differs'), null);
  const list = page.getByTestId('differences');
  await list.getByText(/VRID 51 \(IPv4\) is MASTER on lb1 \(VI_1\) and lb2 \(VI_1\)/).waitFor();
  await list.getByText(/real server 10\.0\.1\.13:80 is up on lb1; down on lb2/).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'cluster-01.png'), fullPage: true });

  // lb2 heals: on the next refresh its cell is no longer flagged
  lb2.setHealth(WEB, '10.0.1.13:80', true);
  await page.getByRole('button', { name: 'Refresh' }).click();
  await list.getByText(/10\.0\.1\.13:80 is up on lb1; down on lb2/).waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('cell-10.0.1.13:80-lb2').getAttribute('data-differs'), null);
  assert.deepEqual(problems, [], 'no page errors, CSP violations or external requests');

  // an operator drains a real server on both directors at once; each audits it, lb2 naming alice@lb1
  const ops: string[] = [];
  const opPage = await loggedIn(browser, url, 'alice', 'alice password', ops);
  await opPage.getByRole('link', { name: 'Cluster' }).click();
  await opPage.getByTestId('cluster-rs-10.0.1.12:80').getByRole('button', { name: 'Drain on all' }).click();
  const dialog = opPage.getByRole('dialog');
  await dialog.getByText('Drain 10.0.1.12:80 on all directors?').waitFor();
  await dialog.getByRole('button', { name: 'Drain 10.0.1.12:80' }).click();
  for (const n of ['lb1', 'lb2']) await opPage.getByTestId(`cell-10.0.1.12:80-${n}`).getByText('weight 0').waitFor();
  assert.equal(lb1.dataplane().get(`${WEB}/10.0.1.12:80`), 0);
  assert.equal(lb2.dataplane().get(`${WEB}/10.0.1.12:80`), 0);
  assert.deepEqual([lb2Store.auditLog()[0]?.who, lb2Store.auditLog()[0]?.action], ['alice@lb1', 'override.set']);
  assert.deepEqual(store.auditLog({ action: 'cluster.forward' }).map((e) => [e.who, e.target]), [['alice', `lb2: ${WEB}/10.0.1.12:80 drain`]]);
  await opPage.evaluate('window.scrollTo(0, 0)');
  await opPage.screenshot({ path: join(ARTIFACTS, 'cluster-02-drained.png'), fullPage: true });
  // one director only: enable it again on lb2
  await opPage.getByTestId('cell-10.0.1.12:80-lb2').getByRole('button', { name: 'Enable 10.0.1.12:80 on lb2' }).click();
  await opPage.getByRole('dialog').getByRole('button', { name: 'Enable 10.0.1.12:80' }).click();
  await opPage.getByTestId('cell-10.0.1.12:80-lb2').getByText('weight 10').waitFor();
  assert.equal(lb1.dataplane().get(`${WEB}/10.0.1.12:80`), 0, 'lb1 stays drained');
  assert.deepEqual(ops, [], 'no page errors on the operator\'s page');
});
