// The config editor in Debian chromium, against lvsd's real config checker (the director's ConfigFile.parse:
// the same schema and semantic checks a reload runs): an error typed into the text is marked at the line and
// column lvsd names, completion offers the schema's keys where the cursor is, hover explains a key, and the
// diff view shows the change before Apply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApi } from '../../daemon/api/server.js';
import { openStore } from '../../daemon/state/store.js';
import { ConfigFile } from '../../daemon/director/config-file.js';
import { loadConfigText } from '../../daemon/config/load.js';
import type { ConfigCheck, ConfigDiff } from '../../daemon/director/port.js';
import { FakeDirector, FAKE_CONFIG } from '../support/fake-director.js';
import { ARTIFACTS, loggedIn, openBrowser, waitUntil } from './browser.js';
import { editorText, setEditorText } from './editor.js';

const PATH = '/etc/lvsd/lvsd.yaml';

/** The fake director's dataplane and VRRP, but lvsd's own config checker for what the editor marks. */
class RealCheckDirector extends FakeDirector {
  readonly #file: ConfigFile;
  constructor() {
    super();
    const r = loadConfigText(FAKE_CONFIG, PATH);
    if (!r.ok) throw new Error(`FAKE_CONFIG is not a valid lvsd config: ${r.errors.map((e) => e.message).join('; ')}`);
    this.#file = new ConfigFile({ config: r.config, text: FAKE_CONFIG });
  }
  override async validateConfig(text: string): Promise<ConfigCheck> {
    const r = await this.#file.parse(text);
    return r.ok ? { ok: true, errors: [] } : { ok: false, errors: r.errors };
  }
  override async diffConfig(text: string): Promise<ConfigDiff> {
    const r = await this.#file.parse(text);
    return r.ok ? super.diffConfig(text) : { ok: false, errors: r.errors, changes: [] };
  }
}

test('config editor: a marker at the line:col lvsd names, completion, hover, diff, apply', { timeout: 90_000 }, async (t) => {
  const browser = await openBrowser();
  t.after(() => browser.close());
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-e2e-editor-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'));
  await store.addUser('alice', 'alice password', 'admin', 'e2e');
  const director = new RealCheckDirector();
  const app = await buildApi({ director, store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());

  const problems: string[] = [];
  const page = await loggedIn(browser, url, 'alice', 'alice password', problems);
  await page.goto(`${url}/#/config`);
  await waitUntil(async () => (await editorText(page)).includes('virtualServers'), 'the running config in the editor');
  assert.equal(await editorText(page), FAKE_CONFIG.trimEnd());

  // ---- an error: VI_2's VRID 300 (1..255). Where does lvsd itself say it is?
  const bad = FAKE_CONFIG.replace('virtualRouterId: 52', 'virtualRouterId: 300');
  const expected = loadConfigText(bad, PATH);
  assert.ok(!expected.ok && expected.errors.length === 1, 'lvsd refuses VRID 300');
  const err = expected.errors[0];
  assert.ok(err !== undefined);
  const badLine = bad.split('\n')[err.line - 1] ?? '';
  assert.match(badLine, /virtualRouterId: 300/, `lvsd names line ${err.line}: ${badLine}`);
  await setEditorText(page, bad);
  const editor = page.getByTestId('config-editor');
  const marked = editor.locator('.cm-lintRange-error');
  await marked.first().waitFor(); // validated as typed, no button pressed
  assert.equal(await marked.count(), 1);
  assert.equal(await marked.textContent(), badLine.slice(err.col - 1).split(/[\s,]/)[0], `the marker starts at column ${err.col}`);
  // the marked text sits on the line lvsd named: its line number in the gutter
  const lines = await editor.locator('.cm-content .cm-line').allInnerTexts();
  const markedLineNo = lines.findIndex((l) => l.includes('virtualRouterId: 300')) + 1;
  assert.equal(markedLineNo, err.line);
  await editor.locator('.cm-lint-marker-error').first().waitFor();
  await page.getByText('1 error(s) marked in the text').waitFor();
  await marked.hover();
  await editor.locator('.cm-tooltip-lint').getByText(/virtualRouterId/).first().waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'editor-01-marker.png') });

  // ---- hover a key: the schema's description of it
  await editor.locator('.cm-line', { hasText: 'scheduler: wrr' }).getByText('scheduler').hover();
  const hover = editor.locator('.cm-schema-hover');
  await hover.waitFor();
  assert.match((await hover.textContent()) ?? '', /scheduler/);
  await page.screenshot({ path: join(ARTIFACTS, 'editor-02-hover.png') });
  await page.mouse.move(0, 0);

  // ---- fix it, and add a key by completion: in VI_2, after "priority: 100", type "preem" and take "preempt"
  await setEditorText(page, FAKE_CONFIG.replace('priority: 150', 'priority: 120'));
  await editor.locator('.cm-line', { hasText: 'priority: 100' }).click();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('preem');
  const options = editor.locator('.cm-tooltip-autocomplete li');
  await options.first().waitFor();
  const offered = await options.allInnerTexts();
  assert.ok(offered.some((o) => o.startsWith('preempt')), `completion offers preempt: ${offered.join(' | ')}`);
  assert.ok(!offered.some((o) => o.startsWith('scheduler')), 'a virtual server key is not offered in a VRRP instance');
  await page.screenshot({ path: join(ARTIFACTS, 'editor-03-completion.png') });
  await options.filter({ hasText: /^preempt$/ }).first().click();
  await page.keyboard.type('false');
  await waitUntil(async () => (await editorText(page)).includes('      priority: 100\n      preempt: false\n'), 'the completed key, indented under VI_2');
  await page.getByText('✓ lvsd finds no error').waitFor();
  assert.equal(await marked.count(), 0, 'the marker is gone once the text is valid');

  // ---- diff, then apply
  await page.getByRole('button', { name: 'Diff' }).click();
  const diff = page.getByTestId('config-diff');
  await diff.locator('.cm-deletedChunk', { hasText: 'priority: 150' }).waitFor();
  await diff.locator('.cm-changedLine', { hasText: 'priority: 120' }).waitFor();
  await diff.locator('.cm-changedLine', { hasText: 'preempt: false' }).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'editor-04-diff.png') });
  await page.getByRole('button', { name: 'Apply…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Apply' }).click();
  await page.getByText(/✓ Applied/).waitFor();
  assert.equal(director.snapshot().vrrp[0]?.basePriority, 120);
  assert.equal(await editorText(page), FAKE_CONFIG.replace('priority: 150', 'priority: 120').replace('      priority: 100\n', '      priority: 100\n      preempt: false\n').trimEnd());
  await page.screenshot({ path: join(ARTIFACTS, 'editor-05-applied.png') });
  assert.deepEqual(problems, [], 'no page errors, CSP violations or external requests');
});
