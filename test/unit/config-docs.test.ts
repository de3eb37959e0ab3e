import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCS_PATH, renderDocs } from '../../scripts/gen-config-docs.js';
import { HEALTH_DOCS_PATH, defaultDisagreements, healthKeys, renderHealthDocs, renderHealthTable } from '../../scripts/health-docs.js';
import { loadConfig } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthCheck } from '../../daemon/config/normalise.js';
import { checkOptions } from '../../daemon/director/plan.js';

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

test('docs/health.md\'s health check table is current (regenerate: node dist/scripts/gen-config-docs.js)', () => {
  assert.equal(readFileSync(HEALTH_DOCS_PATH, 'utf8'), renderHealthDocs());
});

test('every default the schema\'s prose states is the one the normaliser fills in', () => {
  assert.deepEqual(defaultDisagreements(), []);
  // And the check can fail: the old docs' interval, and a default the prose forgot.
  const keys = healthKeys();
  const interval = keys.find((k) => k.key === 'interval');
  assert.ok(interval);
  assert.deepEqual(defaultDisagreements([{ ...interval, schema: { description: 'Time between checks. Default 2s.' } }, { ...interval, key: 'timeout', schema: { description: 'A limit.' } }]), [
    'healthCheck.interval: the description says "Default 2s", the code uses 5s',
    'healthCheck.timeout: the description states no default; the code uses 5s',
  ]);
});

test('the health table says what the code does: 5s/2s, http.ca only with tlsVerify, udp.expect as the director reads it', async () => {
  const table = renderHealthTable();
  assert.match(table, /^\| `interval` \| duration \| `5s` \|/m);
  assert.match(table, /^\| `timeout` \| duration \| `2s` \|/m);
  assert.match(table, /^\| `http\.status` \| [^|]+ \| `\[200-299\]` \|/m);
  assert.match(table, /^\| `dns\.name` \| string \| required \|/m);
  const rows = table.split('\n').slice(2).map((l) => /^\| `([^`]+)`/.exec(l)?.[1]);
  assert.deepEqual(rows, healthKeys().map((k) => k.key));
  assert.ok(rows.includes('http.ca') && !rows.includes('udp.requireReply'), 'only keys the schema accepts');
  // http.ca is offered, and means something only with tlsVerify: alone it is refused where it stands.
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-docs-'));
  try {
    const file = join(dir, 'lvsd.yaml');
    writeFileSync(file, 'virtualServers:\n  - address: 192.0.2.10\n    port: 443\n    healthCheck: { type: https, http: { ca: /etc/ssl/ca.pem } }\n    realServers: [{ address: 10.0.1.11 }]\n');
    const r = await loadConfig(file);
    if (r.ok) assert.fail('http.ca without tlsVerify was accepted');
    assert.match(r.errors.map(formatError).join('\n'), /lvsd\.yaml:4:\d+: .*http\.ca.*only with tlsVerify/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // udp.expect: hex digits are bytes; anything else is a regular expression without slashes.
  const udp = (expect: string): unknown => checkOptions(healthCheck({ type: 'udp', udp: { expect } }, undefined), false).udp?.expect;
  assert.deepEqual(udp('cafe'), { hex: 'cafe' });
  assert.deepEqual(udp('pong'), { regex: 'pong' });
  assert.deepEqual(udp('^OK \\d+'), { regex: '^OK \\d+' });
  assert.match(table, /^\| `udp\.expect` \| string \| — \| Expected reply\. A string of hex digits only .* JavaScript regular expression, written without slashes/m);
});
