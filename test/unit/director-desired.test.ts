import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  desiredTable,
  effectiveWeight,
  liveWeight,
  type DesiredInputs,
  type RealServerPlan,
  type ServicePlan,
} from '../../daemon/director/desired.js';
import type { HealthView } from '../../daemon/health/monitor-api.js';
import type { Override } from '../../daemon/state/schema.js';
import { targetKey } from '../../daemon/state/target-key.js';

const rs = (n: number, extra: Partial<RealServerPlan> = {}): RealServerPlan => ({
  id: `10.0.1.${n}:80`,
  address: `10.0.1.${n}`,
  port: 80,
  weight: n,
  method: 'nat',
  inhibitOnFailure: false,
  ...extra,
});

const web: ServicePlan = {
  id: 'tcp:192.168.77.100:80',
  name: 'web',
  family: 4,
  protocol: 'tcp',
  address: '192.168.77.100',
  port: 80,
  scheduler: 'wrr',
  realServers: [rs(1), rs(2), rs(3, { inhibitOnFailure: true })],
  sorryServer: { id: '10.0.1.250:80', address: '10.0.1.250', port: 80, weight: 1, method: 'nat', inhibit: false },
  quorum: 2,
};

function inputs(part: Partial<DesiredInputs> = {}): DesiredInputs {
  return { services: [web], health: new Map(), overrides: new Map(), quorumLost: new Set(), ...part };
}

const weights = (i: DesiredInputs): Record<string, number> =>
  Object.fromEntries((desiredTable(i).services[0]?.realServers ?? []).map((r) => [r.id, r.weight]));

test('configured weights pass through when everything is healthy and nothing is overridden', () => {
  assert.deepEqual(weights(inputs()), { '10.0.1.1:80': 1, '10.0.1.2:80': 2, '10.0.1.3:80': 3 });
});

test('a failed server leaves the table, unless inhibit_on_failure keeps it at weight 0', () => {
  const health = new Map<string, HealthView>([
    [targetKey({ service: web.id, realServer: '10.0.1.1:80' }), { up: false }],
    [targetKey({ service: web.id, realServer: '10.0.1.3:80' }), { up: false }],
  ]);
  assert.deepEqual(weights(inputs({ health })), { '10.0.1.2:80': 2, '10.0.1.3:80': 0 });
});

test('precedence: maintenance > health down > drain > operator weight > dynamic weight > configured', () => {
  const r = rs(5);
  const down: HealthView = { up: false };
  const dyn: HealthView = { up: true, dynamicWeight: 7 };
  const cases: [HealthView | undefined, Override | undefined, Override | undefined, number | undefined][] = [
    [undefined, undefined, undefined, 5],
    [dyn, undefined, undefined, 7],
    [dyn, undefined, { weight: 9 }, 9],
    [dyn, undefined, { weight: 9, drain: true }, 0],
    [dyn, { drain: true }, undefined, 0],
    [down, undefined, { drain: true }, undefined],
    [undefined, undefined, { maintenance: true }, undefined],
    [undefined, { maintenance: true }, { weight: 4 }, undefined],
    [undefined, { weight: 2 }, undefined, 2],
    [undefined, { weight: 2 }, { weight: 3 }, 3],
  ];
  for (const [h, so, o, want] of cases) {
    assert.equal(effectiveWeight(r, h, so, o), want, JSON.stringify({ h, so, o }));
  }
});

test('overrides apply to one real server or to the whole service', () => {
  const one = new Map<string, Override>([[targetKey({ service: web.id, realServer: '10.0.1.2:80' }), { drain: true }]]);
  assert.deepEqual(weights(inputs({ overrides: one })), { '10.0.1.1:80': 1, '10.0.1.2:80': 0, '10.0.1.3:80': 3 });
  const all = new Map<string, Override>([[web.id, { drain: true }]]);
  assert.deepEqual(weights(inputs({ overrides: all })), { '10.0.1.1:80': 0, '10.0.1.2:80': 0, '10.0.1.3:80': 0 });
});

test('with quorum lost the sorry server takes the service; failed servers inhibited on failure stay at weight 0', () => {
  assert.deepEqual(weights(inputs({ quorumLost: new Set([web.id]) })), { '10.0.1.250:80': 1 });
  const down = new Map([[`${web.id}/10.0.1.2:80`, { up: false }], [`${web.id}/10.0.1.3:80`, { up: false }]]);
  assert.deepEqual(weights(inputs({ quorumLost: new Set([web.id]), health: down })), { '10.0.1.3:80': 0, '10.0.1.250:80': 1 });
  const noSorry: ServicePlan = { ...web, sorryServer: undefined };
  const t = desiredTable({ ...inputs({ quorumLost: new Set([web.id]) }), services: [noSorry] });
  assert.equal(t.services[0]?.realServers.length, 3);
});

test('sorry_server_inhibit: the sorry server waits at weight 0 while the quorum holds, takes its weight when it is lost', () => {
  const inhibited: ServicePlan = { ...web, sorryServer: { ...(web.sorryServer ?? assert.fail()), inhibit: true } };
  const w = (i: Partial<DesiredInputs>): Record<string, number> =>
    Object.fromEntries((desiredTable({ ...inputs(i), services: [inhibited] }).services[0]?.realServers ?? []).map((r) => [r.id, r.weight]));
  assert.deepEqual(w({}), { '10.0.1.1:80': 1, '10.0.1.2:80': 2, '10.0.1.3:80': 3, '10.0.1.250:80': 0 });
  assert.deepEqual(w({ quorumLost: new Set([web.id]) }), { '10.0.1.250:80': 1 });
  // A sorry server that is also a real server is not listed twice.
  const dup: ServicePlan = { ...inhibited, sorryServer: { ...rs(2), inhibit: true } };
  const ids = (desiredTable({ ...inputs(), services: [dup] }).services[0]?.realServers ?? []).map((r) => r.id);
  assert.deepEqual(ids, ['10.0.1.1:80', '10.0.1.2:80', '10.0.1.3:80']);
});

test('the service keeps its identity and configuration; plan-only fields do not leak', () => {
  const s = desiredTable(inputs()).services[0];
  assert.ok(s);
  assert.equal(s.id, web.id);
  assert.equal(s.scheduler, 'wrr');
  assert.equal('name' in s, false);
  assert.equal('sorryServer' in s, false);
  assert.equal('inhibitOnFailure' in (s.realServers[0] ?? {}), false);
});

test('live weight counts only servers that are up, with their dynamic weight', () => {
  const health = new Map<string, HealthView>([
    [targetKey({ service: web.id, realServer: '10.0.1.1:80' }), { up: false }],
    [targetKey({ service: web.id, realServer: '10.0.1.2:80' }), { up: true, dynamicWeight: 10 }],
  ]);
  assert.equal(liveWeight(web, { health }), 13);
});
