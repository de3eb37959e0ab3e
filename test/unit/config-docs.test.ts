import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DOCS_PATH, renderDocs } from '../../scripts/gen-config-docs.js';

test('docs/config.md is current (regenerate: node dist/scripts/gen-config-docs.js)', () => {
  assert.equal(readFileSync(DOCS_PATH, 'utf8'), renderDocs());
});

test('the reference documents every key of the schema, with its type', () => {
  const md = renderDocs();
  for (const key of ['virtualRouterId', 'advertInterval', 'unicastPeers', 'schedulerFlags', 'inhibitOnFailure', 'sorryServer', 'delayBeforeRetry', 'syncDaemon', 'proxyProtocol'])
    assert.match(md, new RegExp(`^\\| \`${key}\` \\| [^|]+`, 'm'), key);
  assert.match(md, /^\| `priority` \| integer 1\.\.255 \|/m);
  assert.match(md, /^\| `advertInterval` \| duration \|/m);
  assert.match(md, /^\| `healthCheck` \| map \(as \[virtualServers\[\]\.healthCheck\]/m);
});
