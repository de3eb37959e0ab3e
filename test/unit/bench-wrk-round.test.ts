// The pure parts of the benchmark's wrk round (bench/wrk-round.ts): reading wrk's report, the route cache,
// and what a round's counters say about the lab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labTrouble, pairedP99, parseWrk, redirected, snmpField, type LabState } from '../../bench/wrk-round.js';
import { acceptQueue, summarize } from '../../bench/listen-queue.js';

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
  const s: LabState = { conntrack: 10, conntrackMax: 1000, insertFailed: 1, invalid: 5, drop: 0, redirectsSent: 0, redirectedRoutes: [], clientTimeWait: 3, clientPorts: 100, listenOverflows: 2, listenDrops: 2, synRetrans: 9 };
  assert.deepEqual(labTrouble(s, s), []);
  const bad = labTrouble(s, { ...s, conntrack: 950, insertFailed: 5, invalid: 30005, drop: 2, redirectsSent: 34, redirectedRoutes: ['10.10.0.11'], clientTimeWait: 60, listenOverflows: 5, listenDrops: 6, synRetrans: 10 });
  assert.equal(bad.length, 10);
  assert.match(bad.join('\n'), /3 handshakes found the director's accept queue full/);
  assert.match(bad.join('\n'), /4 SYNs dropped at the director's listeners/);
  assert.match(bad.join('\n'), /client sent 1 SYNs again/);
  assert.match(bad.join('\n'), /4 conntrack insert failures/);
  assert.match(bad.join('\n'), /30000 packets conntrack called invalid/);
  assert.match(bad.join('\n'), /director sent 34 ICMP redirects/);
  assert.match(bad.join('\n'), /client routes learnt from redirects: 10\.10\.0\.11/);
  assert.match(bad.join('\n'), /conntrack table 950\/1000/);
  assert.match(bad.join('\n'), /client ports in TIME_WAIT 60\/100/);
});

test('snmpField reads /proc/net/netstat\'s TcpExt as it reads /proc/net/snmp', () => {
  const netstat = 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 17 19\nIpExt: InNoRoutes\nIpExt: 4\n';
  assert.equal(snmpField(netstat, 'TcpExt', 'ListenOverflows'), 17);
  assert.equal(snmpField(netstat, 'TcpExt', 'ListenDrops'), 19);
  assert.ok(Number.isNaN(snmpField(netstat, 'TcpExt', 'TCPSynRetrans')));
});

test('acceptQueue: rx_queue of the LISTEN sockets on the port, summed; NaN when none listens there', () => {
  const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 6400090A:1F40 00000000:0000 0A 00000000:0000000C 00:00000000 00000000     0        0 67 1 0 100 0 0 10 0
   1: 6400090A:1F41 00000000:0000 0A 00000000:00000003 00:00000000 00000000     0        0 68 1 0 100 0 0 10 0
   2: 6400090A:1F40 0200090A:C860 01 00000000:000000FF 03:000006F4 00000000     0        0 0 3 0
`;
  assert.equal(acceptQueue(table, 8000), 12); // the established one on 8000 (rx 255 bytes) is not a queue
  assert.equal(acceptQueue(table, 8001), 3);
  assert.ok(Number.isNaN(acceptQueue(table, 8002)));
  assert.deepEqual(summarize([NaN, 2, 4, 0]), { max: 4, mean: 2, samples: 3 });
  assert.ok(Number.isNaN(summarize([NaN]).max));
});

test('pairedP99: each round\'s pair, and in how many the proxy\'s p99 was lower; a failed round is left out', () => {
  const proxy = [{ round: 0, p99ms: 12 }, { round: 2, p99ms: 40.04 }, { round: 1, p99ms: 9 }];
  const anchor = [{ round: 0, p99ms: 14.5 }, { round: 1, p99ms: 9 }, { round: 2, p99ms: 30 }];
  assert.equal(pairedP99(proxy, anchor), '12.0/14.5, 40.0/30.0, 9.0/9.0 ms — lower in 1 of 3');
  assert.equal(pairedP99(proxy, anchor.slice(1)), '40.0/30.0, 9.0/9.0 ms — lower in 0 of 2');
});
