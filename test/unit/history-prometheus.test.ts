// The pure half of the Prometheus-backed graphs (api/history-prometheus.ts): the queries a view asks, with
// a service name that needs escaping, and a query_range answer placed on the view's time axis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyQueries, promString, seriesOf, timeAxis } from '../../daemon/api/history-prometheus.js';

test('queries: every metric /metrics carries, this director\'s matchers and the service escaped', () => {
  const q = historyQueries('job="lvsd", instance="lb1:9180"', 10_000, 'tcp:10.0.0.1:80"}or vector(1)#');
  assert.deepEqual(q.map((x) => `${x.scope}/${x.metric}`), ['virtualServer/cps', 'virtualServer/inBps', 'virtualServer/outBps', 'virtualServer/inPps', 'virtualServer/outPps', 'virtualServer/active', 'realServer/active', 'virtualServer/inactive', 'realServer/inactive', 'realServer/cps', 'realServer/inBps', 'realServer/outBps', 'realServer/inPps', 'realServer/outPps', 'realServer/latencyMs']);
  assert.equal(q[9]?.promql, 'sum by (service, real_server) (irate(lvsd_real_server_connections_total{job="lvsd", instance="lb1:9180", service="tcp:10.0.0.1:80\\"}or vector(1)#"}[60s]))');
  assert.equal(q[14]?.promql, '1000 * max by (service, real_server) (lvsd_real_server_check_latency_seconds{job="lvsd", instance="lb1:9180", service="tcp:10.0.0.1:80\\"}or vector(1)#"})');
  assert.equal(q[0]?.promql, 'sum by (service) (irate(lvsd_service_connections_total{job="lvsd", instance="lb1:9180", service="tcp:10.0.0.1:80\\"}or vector(1)#"}[60s]))');
  assert.equal(q[6]?.promql, 'sum by (service, real_server) (lvsd_real_server_connections{job="lvsd", instance="lb1:9180", service="tcp:10.0.0.1:80\\"}or vector(1)#", state="active"})');
  assert.match(historyQueries('job="lvsd"', 60_000)[1]?.promql ?? '', /^sum by \(service\) \(irate\(lvsd_service_in_bytes_total\{job="lvsd"\}\[180s\]\)\)$/);
  assert.equal(promString('a\\b\n"c'), '"a\\\\b\\n\\"c"');
});

test('time axis and placement: steps ending at now, points on the step they fall on, missing ones null', () => {
  const t = timeAxis(1_000_095_000, 10_000, 4);
  assert.deepEqual(t, [1_000_060_000, 1_000_070_000, 1_000_080_000, 1_000_090_000]);
  assert.deepEqual(timeAxis(1_000_095_000, 10_000, 4, 1_000_070_000), [1_000_080_000, 1_000_090_000]);
  const [q] = historyQueries('job="lvsd"', 10_000).filter((x) => x.scope === 'realServer');
  assert.ok(q);
  const s = seriesOf(q, [
    { metric: { service: 'svc', real_server: '10.0.1.1:80' }, values: [[1_000_060, '3'], [1_000_080.001, '5'], [1_000_090, 'NaN']] },
    { metric: { service: 'svc' }, values: [[1_000_060, '1']] }, // no real_server label: not a real server's series
  ], t);
  assert.deepEqual(s, [{ scope: 'realServer', service: 'svc', realServer: '10.0.1.1:80', metric: 'active', values: [3, null, 5, null] }]);
});
