// The pure parts of lvsd's BGP driver: BIRD's reply framing (replies recorded from bird 2.0.12), the
// `show protocols` parser, the fragment lvsd writes, the announce decision, and the bgp config section.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ReplyFramer, isError, parseProtocols, replyText, type BirdReply } from '../../daemon/bgp/reply.js';
import { protocolName, renderBirdConfig } from '../../daemon/bgp/bird-config.js';
import { bgpAnnouncements } from '../../daemon/director/bgp-desired.js';
import { partsToReload, restartSettings } from '../../daemon/director/reload-parts.js';
import { diffConfig } from '../../daemon/config/diff.js';
import { formatError } from '../../daemon/config/errors.js';
import { loadConfigText } from '../../daemon/config/load.js';
import type { Config } from '../../daemon/config/types.js';

// Recorded from bird 2.0.12 over its control socket (the greeting, then one reply per command).
const RECORDED = [
  '0001 BIRD 2.0.12 ready.\n',
  '2002-Name       Proto      Table      State  Since         Info\n1002-device1    Device     ---        up     22:21:22.179  \n lvsd_v0    Static     master4    down   22:21:22.179  \n upstream   BGP        ---        up     22:21:23.001  Established   \n0000 \n',
  '0011-lvsd_v0: enabled\n0000 \n',
  '9001 syntax error, unexpected CF_SYM_UNDEFINED, expecting CF_SYM_KNOWN or TEXT or ALL\n',
  '0002-Reading configuration from bird.conf\n0020 Configuration OK\n',
  '0002-Reading configuration from bird.conf\n8002 /tmp/p14/b/lvsd.conf:6:44 syntax error, unexpected CF_SYM_UNDEFINED\n',
  '0002-Reading configuration from bird.conf\n0022-Undo scheduled in 30 s\n0004 Reconfiguration in progress\n',
  '1000-BIRD 2.0.12\n1011-Router ID is 10.255.0.1\n Hostname is vm\n Current server time is 2026-12-01 22:21:26.812\n0013 Daemon is up and running\n',
].join('');

test('replies frame the same whatever chunks the socket delivers them in', () => {
  const whole = new ReplyFramer().push(RECORDED);
  assert.equal(whole.length, 8);
  assert.deepEqual(whole.map((r) => r.code), [1, 0, 0, 9001, 20, 8002, 4, 13]);
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: RECORDED.length - 1 }), { maxLength: 20 }), (cuts) => {
    const f = new ReplyFramer();
    const points = [0, ...[...cuts].sort((a, b) => a - b), RECORDED.length];
    const got: BirdReply[] = [];
    for (let i = 1; i < points.length; i++) got.push(...f.push(RECORDED.slice(points[i - 1], points[i])));
    assert.deepEqual(got, whole);
  }), { numRuns: 200 });
});

test('error codes, continuation lines and BIRD\'s own words', () => {
  const [, , enabled, syntax, ok, refused, timed, status] = new ReplyFramer().push(RECORDED);
  assert.ok(enabled !== undefined && !isError(enabled));
  assert.equal(replyText(enabled), 'lvsd_v0: enabled');
  assert.ok(syntax !== undefined && isError(syntax) && ok !== undefined && !isError(ok));
  assert.ok(refused !== undefined && isError(refused));
  assert.match(replyText(refused), /lvsd\.conf:6:44 syntax error/);
  assert.ok(timed !== undefined && replyText(timed).includes('Undo scheduled in 30 s'));
  assert.ok(status !== undefined);
  assert.deepEqual(status.lines.map((l) => l.code), [1000, 1011, 1011, 1011, 13], 'a space-led line keeps the code before it');
  assert.throws(() => new ReplyFramer().push('hello\n'), /not a BIRD reply line: "hello"/);
});

test('show protocols: rows cut at the header\'s columns', () => {
  const reply = new ReplyFramer().push(RECORDED)[1] as BirdReply;
  assert.deepEqual(parseProtocols(reply), [
    { name: 'device1', proto: 'Device', table: '---', state: 'up', since: '22:21:22.179', info: '' },
    { name: 'lvsd_v0', proto: 'Static', table: 'master4', state: 'down', since: '22:21:22.179', info: '' },
    { name: 'upstream', proto: 'BGP', table: '---', state: 'up', since: '22:21:23.001', info: 'Established' },
  ]);
});

test('the fragment: one static protocol per prefix, its state written down, communities and graceful shutdown', () => {
  assert.equal(protocolName('192.0.2.10/32'), 'lvsd_192_0_2_10_32');
  assert.equal(protocolName('2001:db8::10/128'), 'lvsd_2001_db8__10_128');
  const text = renderBirdConfig([
    { prefix: '2001:db8::10/128', announce: false, communities: [], gracefulShutdown: false },
    { prefix: '192.0.2.10/32', announce: true, communities: [[65001, 100]], gracefulShutdown: true },
  ]);
  assert.equal(text, [
    '# Written by lvsd (bgp section of lvsd.yaml): do not edit, lvsd rewrites it.',
    '',
    'protocol static lvsd_192_0_2_10_32 {',
    '  disabled no;',
    '  ipv4;',
    '  route 192.0.2.10/32 blackhole { bgp_community.add((65001, 100)); bgp_community.add((65535, 0)); };',
    '}',
    '',
    'protocol static lvsd_2001_db8__10_128 {',
    '  disabled yes;',
    '  ipv6;',
    '  route 2001:db8::10/128 blackhole;',
    '}',
    '',
  ].join('\n'));
});

const BGP_CONFIG = `
virtualServers:
  - { name: web, address: 192.0.2.10, port: 443, realServers: [{ address: 10.0.1.11 }] }
  - { name: dns, address: 192.0.2.10, port: 53, protocol: udp, realServers: [{ address: 10.0.1.11 }] }
  - { name: api, address: 192.0.2.20, port: 443, realServers: [{ address: 10.0.1.11 }] }
bgp:
  announce:
    - prefix: 192.0.2.10
    - prefix: 198.51.100.0/24
      virtualServers: [api]
      communities: ["65010:100"]
`;

function load(text: string): Config {
  const r = loadConfigText(text, 'lvsd.yaml');
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

test('the bgp section: defaults, prefixes with their length, the virtual servers a prefix follows', () => {
  const bgp = load(BGP_CONFIG).bgp;
  assert.deepEqual(bgp, {
    speaker: 'bird',
    socket: '/run/bird/bird.ctl',
    configFile: '/etc/bird/lvsd.conf',
    configureTimeoutMs: 30_000,
    drainOnStopMs: 5_000,
    announce: [
      { prefix: '192.0.2.10/32', virtualServers: ['tcp:192.0.2.10:443', 'udp:192.0.2.10:53'], communities: [] },
      { prefix: '198.51.100.0/24', virtualServers: ['tcp:192.0.2.20:443'], communities: [[65010, 100]] },
    ],
  });
  assert.equal(load('virtualServers: []').bgp, undefined);
});

test('bad bgp input is refused at its file:line:col', () => {
  const errors = (text: string): string[] => {
    const r = loadConfigText(text, 'lvsd.yaml');
    return r.ok ? [] : r.errors.map(formatError);
  };
  const bad = BGP_CONFIG.replace('virtualServers: [api]', 'virtualServers: [apii]').replace('65010:100', '65010:70000').replace('- prefix: 192.0.2.10\n', '- prefix: 192.0.2.10\n    - prefix: 192.0.2.10/32\n');
  const got = errors(bad).join('\n');
  assert.match(got, /lvsd\.yaml:9:\d+: .*duplicate prefix 192\.0\.2\.10\/32 \(also bgp\.announce\[0\]\)/);
  assert.match(got, /lvsd\.yaml:11:\d+: .*unknown virtual server "apii"/);
  assert.match(got, /lvsd\.yaml:12:\d+: .*community 65010:70000: both halves must be 0\.\.65535/);
  assert.match(errors(BGP_CONFIG.replace('      virtualServers: [api]\n', '')).join('\n'), /no virtual server is on 198\.51\.100\.0\/24: name the virtual servers/);
  assert.match(errors(BGP_CONFIG.replace('prefix: 192.0.2.10', 'prefix: 192.0.2.300')).join('\n'), /lvsd\.yaml:8:\d+: .*prefix/);
});

test('announce while every followed virtual server has quorum; withdraw on loss; drain then withdraw on stop', () => {
  const bgp = load(BGP_CONFIG).bgp;
  assert.ok(bgp);
  const none = { has: () => false };
  const dnsLost = { has: (id: string) => id === 'udp:192.0.2.10:53' };
  const pick = (list: ReturnType<typeof bgpAnnouncements>) => list.map((d) => [d.prefix, d.announce, d.gracefulShutdown]);
  assert.deepEqual(pick(bgpAnnouncements(bgp, none, 'running')), [['192.0.2.10/32', true, false], ['198.51.100.0/24', true, false]]);
  const lost = bgpAnnouncements(bgp, dnsLost, 'running');
  assert.deepEqual(pick(lost), [['192.0.2.10/32', false, false], ['198.51.100.0/24', true, false]]);
  assert.equal(lost[0]?.reason, 'withdrawn: quorum lost on udp:192.0.2.10:53');
  assert.deepEqual(pick(bgpAnnouncements(bgp, dnsLost, 'draining')), [['192.0.2.10/32', false, false], ['198.51.100.0/24', true, true]]);
  assert.deepEqual(pick(bgpAnnouncements(bgp, none, 'stopped')), [['192.0.2.10/32', false, false], ['198.51.100.0/24', false, false]]);
});

test('an operator withdraw takes one prefix off this director whatever quorum says, until a restore', () => {
  const bgp = load(BGP_CONFIG).bgp;
  assert.ok(bgp);
  const none = { has: () => false };
  const held = new Map([['198.51.100.0/24', 'alice']]);
  const list = bgpAnnouncements(bgp, none, 'running', held);
  assert.deepEqual(list.map((d) => [d.prefix, d.announce]), [['192.0.2.10/32', true], ['198.51.100.0/24', false]]);
  assert.equal(list[1]?.reason, 'withdrawn by operator alice');
  // Draining does not bring it back with the graceful-shutdown community: it stays withdrawn.
  assert.deepEqual(bgpAnnouncements(bgp, none, 'draining', held).map((d) => [d.announce, d.gracefulShutdown]), [[true, true], [false, false]]);
  assert.deepEqual(bgpAnnouncements(bgp, none, 'running', new Map()).map((d) => d.announce), [true, true]);
});

test('a reload that changes the bgp section runs the bgp part, and names no restart', () => {
  const a = load(BGP_CONFIG);
  const b = load(BGP_CONFIG.replace('65010:100', '65010:200'));
  const diff = diffConfig(a, b);
  assert.deepEqual(partsToReload(diff), ['bgp']);
  assert.deepEqual(restartSettings(diff.settings), []);
  assert.deepEqual(partsToReload(diffConfig(a, load(BGP_CONFIG.replace(/bgp:[\s\S]*$/, '')))), ['bgp'], 'removing the section is applied too');
});
