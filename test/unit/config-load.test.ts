import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { loadConfig, loadConfigText, type LoadResult } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { parseDuration } from '../../daemon/config/formats.js';
import type { Config } from '../../daemon/config/types.js';
import { healthPlan } from '../../daemon/director/plan.js';

function ok(r: LoadResult): Config {
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const PAIR = `
node: { name: director-1 }
vrrp:
  garp: { masterDelay: 2s }
  scripts:
    chk_nginx: { command: "pgrep nginx", interval: 2s, weight: -20 }
  instances:
    - name: VI_1
      interface: eth0
      virtualRouterId: 51
      priority: 150
      advertInterval: 250ms
      virtualIpaddresses: [192.0.2.10/24, { address: 192.0.2.11, dev: eth1, label: "eth1:vip" }]
      trackScripts: [{ name: chk_nginx }, { name: chk_nginx, weight: -5 }]
      garp: { masterRepeat: 3 }
    - name: VI_6
      interface: eth0
      virtualRouterId: 51
      virtualIpaddresses: ["2001:db8::10/64"]
  syncGroups: [{ name: VG_1, instances: [VI_1, VI_6] }]
virtualServers:
  - address: 192.0.2.10
    port: 80
    scheduler: wrr
    healthCheck: { type: http, interval: 2s, http: { path: /health, status: [200, "300-302"] } }
    realServers:
      - { address: 10.0.1.11, weight: 2 }
      - { address: 10.0.1.12, port: 8080, healthCheck: { interval: 1s, http: { host: www.example.com } } }
  - address: "2001:db8::10"
    port: 53
    protocol: udp
    realServers: [{ address: "2001:db8::53" }]
  - fwmark: 7
    method: dr
    realServers: [{ address: 10.0.1.21 }, { address: 10.0.1.22, port: 443 }]
`;

test('a valid HA pair config normalises: ids, durations in ms, defaults, merges', () => {
  const c = ok(loadConfigText(PAIR, 'pair.yaml'));
  assert.equal(c.source, 'pair.yaml');
  assert.equal(c.node.name, 'director-1');
  assert.deepEqual([c.api.host, c.api.port, c.api.socket], ['127.0.0.1', 9180, '/run/lvsd/lvsd.sock']);
  assert.equal(c.stateFile, '/var/lib/lvsd/state.json');
  const [vi1, vi6] = c.vrrp.instances;
  assert.ok(vi1 && vi6);
  assert.equal(vi1.advertIntervalMs, 250);
  assert.equal(vi1.version, 3);
  assert.equal(vi1.family, 4);
  assert.equal(vi6.family, 6);
  assert.equal(vi1.initialState, 'BACKUP');
  assert.deepEqual(vi1.virtualIpaddresses.map((v) => [v.cidr, v.dev, v.label]), [
    ['192.0.2.10/24', 'eth0', undefined],
    ['192.0.2.11/32', 'eth1', 'eth1:vip'],
  ]);
  assert.deepEqual(vi1.trackScripts, [{ name: 'chk_nginx', weight: -20 }, { name: 'chk_nginx', weight: -5 }]);
  // The lower-priority burst follows the global master burst (5 GARPs, 2 s), not the instance's own 3 (keepalived alike).
  assert.deepEqual(vi1.garp, { masterDelayMs: 2000, masterRepeat: 3, masterRefreshMs: 0, masterRefreshRepeat: 1, intervalMs: 0, naIntervalMs: 0, extraIfMs: 0, lowerPrioRepeat: 5, lowerPrioDelayMs: 2000 });
  assert.deepEqual([vi1.lowerPrioNoAdvert, vi1.higherPrioSendAdvert], [false, false]);
  assert.equal(vi6.garp.masterRepeat, 5);
  assert.equal(vi1.syncGroup, 'VG_1');
  assert.equal(c.vrrp.scripts.chk_nginx?.timeoutMs, 2000);

  const [web, dns, mark] = c.virtualServers;
  assert.ok(web && dns && mark);
  assert.deepEqual(c.virtualServers.map((v) => v.id), ['tcp:192.0.2.10:80', 'udp:[2001:db8::10]:53', 'fwmark:4:7']);
  assert.equal(web.name, 'tcp:192.0.2.10:80');
  assert.deepEqual(web.realServers.map((r) => r.id), ['10.0.1.11:80', '10.0.1.12:8080']);
  assert.deepEqual(dns.realServers.map((r) => r.id), ['[2001:db8::53]:53']);
  assert.deepEqual(mark.realServers.map((r) => [r.id, r.method]), [['10.0.1.21:0', 'dr'], ['10.0.1.22:443', 'dr']]);
  assert.equal(dns.scheduler, 'wlc');
  assert.equal(web.quorum, 1);
  // Health check: the service's, with the real server's overrides merged over it.
  const [rs1, rs2] = web.realServers;
  assert.equal(rs1?.healthCheck.intervalMs, 2000);
  assert.deepEqual(rs1.healthCheck.http?.status, [{ min: 200, max: 200 }, { min: 300, max: 302 }]);
  assert.equal(rs2?.healthCheck.intervalMs, 1000);
  assert.equal(rs2.healthCheck.http?.path, '/health');
  assert.equal(rs2.healthCheck.http.host, 'www.example.com');
  assert.equal(dns.realServers[0]?.healthCheck.type, 'none');
});

test('the same VRID on another interface or another family is fine', () => {
  ok(loadConfigText(`
vrrp:
  instances:
    - { name: A, interface: eth0, virtualRouterId: 9, virtualIpaddresses: [192.0.2.1/24] }
    - { name: B, interface: eth1, virtualRouterId: 9, virtualIpaddresses: [192.0.2.2/24] }
    - { name: C, interface: eth0, virtualRouterId: 9, virtualIpaddresses: ["2001:db8::1/64"] }
`));
});

test('v2 with authentication and whole-second interval is valid', () => {
  const c = ok(loadConfigText(`
vrrp:
  instances:
    - { name: A, interface: eth0, virtualRouterId: 9, version: 2, advertInterval: 3, authentication: { type: PASS, password: secret12 }, virtualIpaddresses: [192.0.2.1/24] }
`));
  assert.equal(c.vrrp.instances[0]?.advertIntervalMs, 3000);
  assert.deepEqual(c.vrrp.instances[0].authentication, { type: 'PASS', password: 'secret12' });
});

test('virtualIpaddressesExcluded: held, not advertised, either family; one instance per address; a v3 instance needs a VIP, a v2 one may have none', () => {
  const c = ok(loadConfigText(`
vrrp:
  instances:
    - { name: A, interface: eth0, virtualRouterId: 9, virtualIpaddresses: [192.0.2.1/24], virtualIpaddressesExcluded: [192.0.2.50/24, "2001:db8::50/64"] }
    - { name: B, interface: eth0, virtualRouterId: 10, version: 2, unicastPeers: [192.0.2.9] }
virtualServers: [{ address: 192.0.2.50, port: 80 }]
`));
  const [a, b] = c.vrrp.instances;
  assert.deepEqual(a?.virtualIpaddressesExcluded.map((v) => [v.cidr, v.family, v.dev]), [['192.0.2.50/24', 4, 'eth0'], ['2001:db8::50/64', 6, 'eth0']]);
  assert.equal(a.family, 4);
  assert.deepEqual([b?.virtualIpaddresses, b?.virtualIpaddressesExcluded, b?.family], [[], [], 4]);
  const bad = loadConfigText(`
vrrp:
  instances:
    - { name: A, interface: eth0, virtualRouterId: 9, virtualIpaddresses: [192.0.2.1/24], virtualIpaddressesExcluded: [192.0.2.1/24] }
    - name: C
      interface: eth0
      virtualRouterId: 11
`, 'x.yaml');
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors.map(formatError), [
    'x.yaml:4:120: vrrp.instances[0].virtualIpaddressesExcluded[0]: VIP 192.0.2.1 is listed twice',
    'x.yaml:5:7: vrrp.instances[1]: a version 3 instance needs at least one address in virtualIpaddresses (only version: 2 instances may have none, as in keepalived)',
  ]);
});

test('an empty file (or only comments) is refused; {} is a valid config with every default', () => {
  for (const text of ['', '\n\n', '# truncated\n', '---\n']) {
    const r = loadConfigText(text, 'e.yaml');
    assert.ok(!r.ok, JSON.stringify(text));
    assert.deepEqual(r.errors.map(formatError), ['e.yaml:1:1: the file is empty (no settings at all); write {} for a config with every default']);
  }
  const c = ok(loadConfigText('{}\n'));
  assert.equal(c.dataplane, 'auto');
  assert.deepEqual(c.virtualServers, []);
  assert.deepEqual(c.vrrp.instances, []);
});

// ---- what errors echo (issue 17, item 5) -------------------------------------------------------

const V2 = (auth: string) => `
vrrp:
  instances:
    - { name: A, interface: eth0, virtualRouterId: 9, version: 2, authentication: ${auth}, virtualIpaddresses: [192.0.2.1/24] }
`;

test('a secret is never echoed: an unquoted numeric VRRP password names the place and the kind, not the value', () => {
  const cases: [string, RegExp][] = [
    ['{ type: PASS, password: 73918264 }', /authentication\.password: must be a string, got a number \(not shown: a secret\)$/],
    ['{ type: PASS, password: 7391.8264 }', /authentication\.password: must be a string, got a number \(not shown: a secret\)$/],
    ['{ type: PASS, password: [hunter22] }', /authentication\.password: must be a string, got a list/],
    ['{ type: PASS, password: "" }', /authentication\.password: must not be empty$/],
    ['{ type: PASS, password: toolongsecret }', /authentication\.password: must be at most 8 characters, got 13$/],
  ];
  for (const [auth, want] of cases) {
    const r = loadConfigText(V2(auth), 's.yaml');
    assert.ok(!r.ok, auth);
    const text = r.errors.map(formatError).join('\n');
    assert.match(text, want);
    for (const secret of ['73918264', '7391.8264', '8264', 'hunter22', 'toolongsecret']) assert.ok(!text.includes(secret), `${auth}: "${secret}" echoed in ${text}`);
  }
});

test('an unknown key with terminal escapes is printed escaped; long keys and values are cut', () => {
  const r = loadConfigText(`node: { name: x }\n"\\e[31mred\\e[0m\\u202e": 1\n${'k'.repeat(1000)}: 1\ndataplane: "${'\\e'.repeat(3000)}"\n`, 'k.yaml');
  assert.ok(!r.ok);
  for (const e of r.errors) {
    const line = formatError(e);
    assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u202e]/, `raw control character in ${JSON.stringify(line)}`);
    assert.ok(e.message.length <= 300 && e.path.length <= 200, `bounded: ${String(line.length)}`);
  }
  assert.match(formatError(r.errors[0] ?? assert.fail()), /unknown key "\\u001b\[31mred\\u001b\[0m\\u202e"/);
});

test('a binary file gives one line, a file with thousands of problems the first 100 and a count', () => {
  const bytes = Buffer.alloc(300_000);
  let x = 2463534242;
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    bytes[i] = x & 0xff;
  }
  const withNul = loadConfigText(bytes.toString('latin1'), 'b.bin');
  assert.ok(!withNul.ok);
  assert.equal(withNul.errors.length, 1);
  assert.match(withNul.errors[0]?.message ?? '', /not a text file \(a NUL byte here\)/);
  // the same noise without NUL bytes: YAML errors by the thousand, a few reported, each short
  const noNul = loadConfigText(bytes.toString('latin1').replace(/\0/g, ''), 'b.bin');
  assert.ok(!noNul.ok);
  const printed = noNul.errors.map(formatError).join('\n');
  assert.ok(noNul.errors.length <= 101, String(noNul.errors.length));
  assert.ok(printed.length < 50_000, `${String(printed.length)} characters of errors`);
  assert.doesNotMatch(printed, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  const many = loadConfigText(`virtualServers:\n${Array.from({ length: 500 }, (_, i) => `  - { address: 192.0.2.${String(i % 250)}, port: 80, bogus${String(i)}: 1 }`).join('\n')}\n`, 'm.yaml');
  assert.ok(!many.ok);
  assert.equal(many.errors.length, 101);
  assert.match(formatError(many.errors[100] ?? assert.fail()), /^m\.yaml:\d+:\d+: \d+ more errors not shown \(the first 100 are above\)$/);
});

test('warnings do not fail the load: a virtual address that is no VIP', () => {
  const r = loadConfigText(`
vrrp:
  instances: [{ name: A, interface: eth0, virtualRouterId: 9, virtualIpaddresses: [192.0.2.1/24] }]
virtualServers: [{ address: 192.0.2.99, port: 80 }]
`, 'w.yaml');
  assert.ok(r.ok);
  assert.deepEqual(r.warnings.map(formatError), ['w.yaml:4:29: virtualServers[0].address: 192.0.2.99 is not a VIP of any VRRP instance on this director']);
});

test('loadConfig names an unreadable file', async () => {
  const r = await loadConfig('/nonexistent/lvsd.yaml');
  assert.equal(r.ok, false);
  assert.match(formatError(r.errors[0] ?? assert.fail()), /^\/nonexistent\/lvsd\.yaml:1:1: cannot read: ENOENT: no such file or directory/);
});

test('loadConfig reads a file and reports with its path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-config-'));
  try {
    const f = join(dir, 'lvsd.yaml');
    writeFileSync(f, 'dataplane: kernel\n');
    const r = await loadConfig(f);
    assert.equal(r.ok, false);
    assert.deepEqual(r.errors.map(formatError), [`${f}:1:12: dataplane: "kernel" is not one of: auto, ipvs, nftables, userspace`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('anchors and merge keys work (keepalived users template real servers)', () => {
  const c = ok(loadConfigText(`
virtualServers:
  - address: 192.0.2.10
    port: 80
    realServers:
      - { <<: &rs { port: 8080, weight: 5 }, address: 10.0.1.1 }
      - { <<: *rs, address: 10.0.1.2, weight: 1 }
`));
  assert.deepEqual(c.virtualServers[0]?.realServers.map((r) => [r.id, r.weight]), [['10.0.1.1:8080', 5], ['10.0.1.2:8080', 1]]);
});

test('property: every rendered duration parses back to its milliseconds', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.constantFrom('ms', 's', 'm', 'h'), (n, unit) => {
      const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
      assert.equal(parseDuration(`${n}${unit}`), n * factor);
      assert.equal(parseDuration(n), n * 1000);
    }),
  );
});

test('property: error lines always carry a line and column inside the file', () => {
  fc.assert(
    fc.property(fc.integer({ min: -5, max: 300 }), fc.integer({ min: -5, max: 70_000 }), (prio, weight) => {
      const text = `vrrp:\n  instances:\n    - { name: A, interface: eth0, virtualRouterId: 9, priority: ${prio}, virtualIpaddresses: [192.0.2.1/24] }\nvirtualServers:\n  - address: 192.0.2.1\n    port: 80\n    realServers: [{ address: 10.0.0.1, weight: ${weight} }]\n`;
      const r = loadConfigText(text, 'p.yaml');
      const bad = (prio < 1 || prio > 255 ? 1 : 0) + (weight < 0 || weight > 65535 ? 1 : 0);
      if (bad === 0) { assert.ok(r.ok); return; }
      assert.ok(!r.ok);
      assert.equal(r.errors.length, bad);
      for (const e of r.errors) assert.ok(e.line >= 1 && e.line <= 7 && e.col >= 1, formatError(e));
    }),
    { numRuns: 200 },
  );
});

test('normalised details: ipvs, sync daemon, persistence, sorry server, tunnel, notify, api', () => {
  const c = ok(loadConfigText(`
api: { listen: "[::1]:9443", tls: { cert: /etc/lvsd/c.pem, key: /etc/lvsd/k.pem } }
ipvs: { removal: immediate, timeouts: { tcp: 15m, udp: 30 }, syncDaemon: { interface: eth1 } }
userspace: { idleTimeout: 90s, proxyProtocol: v2 }
vrrp:
  instances:
    - name: VI_1
      interface: eth0
      virtualRouterId: 51
      virtualIpaddresses: [192.0.2.10/24]
      notify: { master: /bin/m, any: /bin/any }
      trackInterfaces: [{ name: eth1 }, { name: eth2, weight: -10 }]
      trackFiles: [{ path: /run/prio }]
virtualServers:
  - address: 192.0.2.10
    port: 443
    method: tun
    persistence: { timeout: 5m }
    sorryServer: { address: 10.0.9.9 }
    notify: { quorumDown: /bin/down }
    realServers:
      - { address: 10.0.1.11, tunnel: { type: gue, port: 5555, checksum: remcsum }, upperThreshold: 100, lowerThreshold: 50, notify: { up: /bin/up } }
`));
  assert.deepEqual([c.api.host, c.api.port, c.api.tls?.cert], ['::1', 9443, '/etc/lvsd/c.pem']);
  assert.equal(c.ipvs.removal, 'immediate');
  assert.deepEqual(c.ipvs.timeouts, { tcpMs: 900_000, udpMs: 30_000 });
  assert.deepEqual(c.ipvs.syncDaemon, {
    interface: 'eth1', syncId: 0, maxLen: 1472, mcastGroup: '224.0.0.81', port: 8848, ttl: 1,
    role: 'follow-vrrp', threshold: 3, thresholdPeriod: 0, refreshPeriodMs: 60_000, persistMode: 'all', ports: 1,
  });
  assert.deepEqual(c.userspace, { idleTimeoutMs: 90_000, proxyProtocol: 'v2' });
  const vi = c.vrrp.instances[0];
  assert.ok(vi);
  assert.deepEqual(vi.notify, { master: '/bin/m', any: '/bin/any' });
  assert.deepEqual(vi.trackInterfaces, [{ name: 'eth1', weight: 0 }, { name: 'eth2', weight: -10 }]);
  assert.deepEqual(vi.trackFiles, [{ path: '/run/prio', weight: 1 }]);
  const vs = c.virtualServers[0];
  assert.ok(vs);
  assert.deepEqual(vs.persistence, { timeoutMs: 300_000, netmask: '255.255.255.255' });
  assert.deepEqual(vs.sorryServer, { id: '10.0.9.9:443', address: '10.0.9.9', port: 443, method: 'tun', inhibit: false });
  assert.deepEqual(vs.notify, { quorumDown: '/bin/down' });
  const rs = vs.realServers[0];
  assert.ok(rs);
  assert.deepEqual(rs.tunnel, { type: 'gue', port: 5555, checksum: 'remcsum' });
  assert.deepEqual([rs.method, rs.upperThreshold, rs.lowerThreshold, rs.notify.up], ['tun', 100, 50, '/bin/up']);
});

test('agent and DNS-over-TCP settings normalise and reach the health plan', () => {
  const c = ok(loadConfigText(`
virtualServers:
  - address: 192.0.2.10
    port: 80
    healthCheck: { type: http, agent: { port: 9999 } }
    realServers:
      - { address: 10.0.1.11 }
      - { address: 10.0.1.12, healthCheck: { type: agent, agent: { send: status } } }
  - address: 192.0.2.53
    port: 53
    protocol: udp
    healthCheck: { type: dns, dns: { name: www.example.com, protocol: tcp } }
    realServers: [{ address: 10.0.1.21 }]
`, 'agent.yaml'));
  const [rs1, rs2, rs3] = c.virtualServers.flatMap((v) => v.realServers.map((r) => r.healthCheck));
  assert.deepEqual(rs1?.agent, { port: 9999 });
  assert.deepEqual(rs2?.agent, { port: 9999, send: 'status' }, 'agent settings merge key by key');
  assert.equal(rs2.type, 'agent');
  assert.deepEqual(rs3?.dns, { name: 'www.example.com', type: 'A', expectRcode: 'NOERROR', protocol: 'tcp', tcpOnTruncation: true });
  const targets = healthPlan(c).targets;
  assert.deepEqual(targets.map((t) => [t.check.type, t.check.agent, t.check.dns?.protocol]), [
    ['http', { port: 9999 }, undefined],
    ['agent', { port: 9999, send: 'status' }, undefined],
    ['dns', undefined, 'tcp'],
  ]);
});

test('haSuspend: default false, carried when set, refused on a fwmark virtual server (keepalived clears it there)', () => {
  const base = (vs: string) => `virtualServers:\n  - { ${vs}, realServers: [{ address: 10.0.1.1, port: 80 }] }\n`;
  assert.equal(ok(loadConfigText(base('address: 192.0.2.10, port: 80'), 'a.yaml')).virtualServers[0]?.haSuspend, false);
  assert.equal(ok(loadConfigText(base('address: 192.0.2.10, port: 80, haSuspend: true'), 'a.yaml')).virtualServers[0]?.haSuspend, true);
  const fw = loadConfigText(base('fwmark: 7, haSuspend: true'), 'a.yaml');
  if (fw.ok) assert.fail('haSuspend on a fwmark virtual server was accepted');
  assert.match(fw.errors.map(formatError).join('\n'), /haSuspend: haSuspend follows the virtual address; a fwmark virtual server has none/);
});

test('checker bindPort and fwmark: carried to the health plan; refused where no socket or no native engine can honour them', () => {
  const vs = (hc: string) => `virtualServers:\n  - { address: 192.0.2.10, port: 80, healthCheck: { ${hc} }, realServers: [{ address: 10.0.1.1, port: 80 }] }\n`;
  const c = ok(loadConfigText(vs('type: http, bindPort: 40123, fwmark: 42'), 'a.yaml'));
  const check = healthPlan(c).targets[0]?.check;
  assert.deepEqual([check?.bindPort, check?.fwmark], [40123, 42]);
  const errs = (hc: string): string => {
    const r = loadConfigText(vs(hc), 'a.yaml');
    return r.ok ? '' : r.errors.map(formatError).join('\n');
  };
  assert.equal(errs('type: https, bindPort: 40123'), '');
  assert.equal(errs('type: smtp, fwmark: 42'), '', 'smtp runs on the native engine too');
  assert.match(errs('type: https, fwmark: 42'), /fwmark: fwmark is set by the native probe engine, which runs tcp, plain http and smtp checks, not https/);
  assert.match(errs('type: tcp, fwmark: 42, agent: { port: 9999 }'), /fwmark does not go with agent or bindInterface/);
  assert.match(errs('type: ping, bindPort: 40123'), /bindPort: a ping check has no socket of its own to bind a port/);
  assert.match(errs('type: tcp, fwmark: 0'), /fwmark/);
});
