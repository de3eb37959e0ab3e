// Several checkers per real server in the config: http.urls (one checker per url, all must pass) and
// moreChecks (a virtual server's default, a real server's own list replacing it), as normalise.ts
// builds them and plan.ts hands them to the health monitor. The one-check form stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffConfig } from '../../daemon/config/diff.js';
import { loadConfigText, type LoadResult } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import type { Config } from '../../daemon/config/types.js';
import { healthPlan } from '../../daemon/director/plan.js';

function ok(r: LoadResult): Config {
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const TEXT = `
virtualServers:
  - address: 192.0.2.10
    port: 80
    healthCheck:
      type: http
      interval: 2s
      fall: 2
      http:
        host: www.example.com
        urls:
          - { path: /, status: [200] }
          - { path: /api/health, digest: 0123456789ABCDEF0123456789abcdef }
    moreChecks:
      - { type: tcp, connectPort: 8443, interval: 1s }
    realServers:
      - address: 10.0.1.11
      - address: 10.0.1.12
        healthCheck: { http: { path: /only } }
      - address: 10.0.1.13
        moreChecks: [{ type: exec, exec: { command: /bin/true } }]
      - address: 10.0.1.14
        healthCheck: { type: none }
  - address: 192.0.2.10
    port: 81
    healthCheck: { type: http, http: { path: /one } }
    realServers: [{ address: 10.0.1.21 }]
`;

test('config: http.urls become one checker per url with the check\'s timing; moreChecks follow', () => {
  const c = ok(loadConfigText(TEXT));
  const [rs1, rs2, rs3, rs4] = c.virtualServers[0]?.realServers ?? [];
  assert.ok(rs1 && rs2 && rs3 && rs4);
  assert.equal(rs1.healthCheck.http?.path, '/');
  assert.deepEqual(rs1.healthCheck.http.status, [{ min: 200, max: 200 }]);
  assert.deepEqual(rs1.moreChecks.map((m) => [m.type, m.http?.path, m.http?.digest, m.http?.host, m.intervalMs, m.fall]), [
    ['http', '/api/health', '0123456789abcdef0123456789abcdef', 'www.example.com', 2000, 2],
    ['tcp', undefined, undefined, undefined, 1000, 1],
  ]);
  assert.deepEqual(rs1.moreChecks[0]?.http?.status, [{ min: 200, max: 299 }], 'a url without status gets the default, not its neighbour\'s');
  // A real server's one page replaces the service's urls; the service's moreChecks still apply.
  assert.equal(rs2.healthCheck.http?.path, '/only');
  assert.deepEqual(rs2.moreChecks.map((m) => m.type), ['tcp']);
  // Its own moreChecks replace the service's.
  assert.deepEqual(rs3.moreChecks.map((m) => [m.type, m.http?.path]), [['http', '/api/health'], ['exec', undefined]]);
  assert.equal(rs4.healthCheck.type, 'none');
  // The one-check form is untouched.
  const single = c.virtualServers[1]?.realServers[0];
  assert.equal(single?.healthCheck.http?.path, '/one');
  assert.deepEqual(single.moreChecks, []);
});

test('config → health plan: every checker of a real server in one target; none checks left out', () => {
  const plan = healthPlan(ok(loadConfigText(TEXT)));
  const byId = new Map(plan.targets.map((t) => [t.id, t]));
  const t1 = byId.get('tcp:192.0.2.10:80/10.0.1.11:80');
  assert.equal(t1?.check.http?.path, '/');
  assert.deepEqual(t1.moreChecks?.map((m) => [m.type, m.http?.path ?? m.connectPort]), [['http', '/api/health'], ['tcp', 8443]]);
  // healthCheck none but a moreChecks list: the further checkers still run, the first becomes `check`.
  const t4 = byId.get('tcp:192.0.2.10:80/10.0.1.14:80');
  assert.equal(t4?.check.type, 'tcp');
  assert.equal(t4.moreChecks, undefined);
  const t5 = byId.get('tcp:192.0.2.10:81/10.0.1.21:81');
  assert.equal(t5?.moreChecks, undefined, 'one check: the target has no moreChecks');
});

test('config: a reload that changes only the 2nd url is a change of moreChecks, not of healthCheck', () => {
  const a = ok(loadConfigText(TEXT));
  const b = ok(loadConfigText(TEXT.replace('/api/health', '/api/ready')));
  const d = diffConfig(a, b);
  const vs = d.virtualServers.changed[0];
  assert.deepEqual(vs?.fields, ['moreChecks']);
  assert.deepEqual(vs.realServers.changed.map((r) => [r.key, r.fields]), [['10.0.1.11:80', ['moreChecks']], ['10.0.1.13:80', ['moreChecks']]]);
});
