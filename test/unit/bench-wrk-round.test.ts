// The pure parts of the benchmark's wrk round (bench/wrk-round.ts): reading wrk's report, the route cache,
// and what a round's counters say about the lab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labTrouble, parseWrk, redirected, type LabState } from '../../bench/wrk-round.js';

test('parseWrk: rate, p99 in ms whatever wrk\'s unit, socket errors plus non-2xx', () => {
  const out = `Running 10s test @ http://10.9.0.100/
  Latency Distribution
     50%  1.20ms
     99%  812.00us
  101240 requests in 10.05s, 80.00MB read
  Socket errors: connect 3, read 1, write 0, timeout 7
  Non-2xx or 3xx responses: 2
Requests/sec:  10078.42
`;
  assert.deepEqual(parseWrk(out), { rps: 10078.42, p99ms: 0.812, errors: 13 });
  assert.equal(parseWrk('     99%    1.50s\nRequests/sec: 1.0\n').p99ms, 1500);
  assert.ok(Number.isNaN(parseWrk('unable to connect').rps));
});

test('redirected: only route cache entries a redirect made', () => {
  const cache = `10.10.0.11 via 10.10.0.11 dev eth0 
    cache <redirected> expires 289sec 
10.10.0.12 via 10.9.0.2 dev eth0 
    cache expires 500sec mtu 1400 
`;
  assert.deepEqual(redirected(cache), ['10.10.0.11']);
  assert.deepEqual(redirected(''), []);
});

test('labTrouble: counter deltas and limits in words; a clean round says nothing', () => {
  const s: LabState = { conntrack: 10, conntrackMax: 1000, insertFailed: 1, invalid: 5, drop: 0, redirectsSent: 0, redirectedRoutes: [], clientTimeWait: 3, clientPorts: 100 };
  assert.deepEqual(labTrouble(s, s), []);
  const bad = labTrouble(s, { ...s, conntrack: 950, insertFailed: 5, invalid: 30005, drop: 2, redirectsSent: 34, redirectedRoutes: ['10.10.0.11'], clientTimeWait: 60 });
  assert.equal(bad.length, 7);
  assert.match(bad.join('\n'), /4 conntrack insert failures/);
  assert.match(bad.join('\n'), /30000 packets conntrack called invalid/);
  assert.match(bad.join('\n'), /director sent 34 ICMP redirects/);
  assert.match(bad.join('\n'), /client routes learnt from redirects: 10\.10\.0\.11/);
  assert.match(bad.join('\n'), /conntrack table 950\/1000/);
  assert.match(bad.join('\n'), /client ports in TIME_WAIT 60\/100/);
});
