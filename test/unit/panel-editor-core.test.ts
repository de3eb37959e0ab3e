// The config editor's pure core (webui/src/editor): where the cursor is in half-typed YAML, and what the
// real config/lvsd.schema.json offers there (completion keys, values, hover text).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { keyPathAt, placeAt } from '../../webui/src/editor/yaml-path.js';
import { hoverAt, keysAt, valuesAt, type JsonSchema } from '../../webui/src/editor/schema-walk.js';

const schema = JSON.parse(readFileSync(new URL('../../../config/lvsd.schema.json', import.meta.url), 'utf8')) as JsonSchema;

/** The place at the "|" in `t` (the bar removed). */
const at = (t: string): ReturnType<typeof placeAt> => placeAt(t.replace('|', ''), t.indexOf('|'));

const DOC = `vrrp:
  instances:
    - name: VI_1
      # a comment at another indentation
        
      priority: 150
virtualServers:
  - name: web
    realServers:
      - address: 10.0.1.11
        |`;

test('placeAt: a key inside a real server, across comments and blank lines', () => {
  assert.deepEqual(at(DOC), { path: ['virtualServers', '[]', 'realServers', '[]'], kind: 'key', prefix: '', from: DOC.indexOf('|') });
});

test('placeAt: a half-typed key after "- ", and a value', () => {
  const t1 = 'vrrp:\n  instances:\n    - virt|';
  assert.deepEqual(at(t1), { path: ['vrrp', 'instances', '[]'], kind: 'key', prefix: 'virt', from: t1.indexOf('virt') });
  const t2 = 'virtualServers:\n  - name: web\n    scheduler: w|';
  assert.deepEqual(at(t2), { path: ['virtualServers', '[]'], kind: 'value', key: 'scheduler', prefix: 'w', from: t2.indexOf('|') - 1 });
  assert.deepEqual(at('|').path, []);
  assert.deepEqual(at('node:\n  na|'), { path: ['node'], kind: 'key', prefix: 'na', from: 8 });
});

test('keyPathAt: the key under the cursor, or null off a key', () => {
  const t = DOC.replace('|', '');
  assert.deepEqual(keyPathAt(t, t.indexOf('priority') + 3), ['vrrp', 'instances', '[]', 'priority']);
  assert.deepEqual(keyPathAt(t, t.indexOf('address') + 1), ['virtualServers', '[]', 'realServers', '[]', 'address']);
  assert.equal(keyPathAt(t, t.indexOf('150') + 1), null);
});

test('the real schema: keys, values and hover where the cursor is', () => {
  const vi = keysAt(schema, ['vrrp', 'instances', '[]']).map((k) => k.name);
  assert.ok(vi.includes('virtualRouterId') && vi.includes('priority') && vi.includes('interface'), vi.join(','));
  const rs = keysAt(schema, ['virtualServers', '[]', 'realServers', '[]']).map((k) => k.name);
  assert.ok(rs.includes('weight') && rs.includes('address'), rs.join(','));
  assert.ok(!rs.includes('scheduler'), 'a virtual server key is not offered in a real server');
  assert.ok(valuesAt(schema, ['virtualServers', '[]', 'scheduler']).includes('wrr'));
  assert.ok(valuesAt(schema, ['virtualServers', '[]', 'protocol']).includes('udp'));
  const h = hoverAt(schema, ['vrrp', 'instances', '[]', 'priority']);
  assert.ok(h !== null && h.description.length > 0 && /integer/.test(h.type), JSON.stringify(h));
  assert.equal(hoverAt(schema, ['vrrp', 'nosuchkey']), null);
  assert.deepEqual(keysAt(schema, ['nosuch', '[]']), []);
});
