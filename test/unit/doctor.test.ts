// `lvsd doctor`'s rules over made-up machines (the pure part, doctor-checks.ts): each finding an LVS operator
// trips over, the exit code, and the real-server setup printed for DR and TUN. The real machine: test/vm/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import type { Config } from '../../daemon/config/types.js';
import { doctorExit, doctorFindings, realServerSetup, renderFindings, type Facts, type Finding, type InterfaceFacts } from '../../daemon/cli/doctor-checks.js';

function config(text: string): Config {
  const r = loadConfigText(text, 'lvsd.yaml');
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const PAIR = `dataplane: ipvs
ipvs:
  syncDaemon: { interface: eth1, syncId: 51 }
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, virtualIpaddresses: [10.1.0.100/24] }
virtualServers:
  - name: web
    address: 10.1.0.100
    port: 80
    scheduler: wlc
    method: dr
    realServers:
      - { address: 10.1.0.11 }
      - { address: 10.1.0.12 }
  - name: tunnelled
    address: 10.1.0.100
    port: 443
    scheduler: mh
    method: tun
    realServers:
      - { address: 10.9.0.21 }
  - name: nat
    address: 10.1.0.100
    port: 8080
    scheduler: wlc
    method: nat
    realServers:
      - { address: 10.2.0.11 }
`;

const UP: InterfaceFacts = { exists: true, up: true, multicast: true, ipv4: ['192.168.77.1/24'] };

/** A healthy director; `over` changes one fact at a time. */
function facts(over: { modules?: Record<string, 'loaded' | 'loadable' | 'missing'>; sysctls?: Record<string, string>; ifaces?: Record<string, InterfaceFacts>; netRaw?: boolean; netAdmin?: boolean } = {}): Facts {
  const sysctls: Record<string, string> = { 'net.ipv4.ip_forward': '1', 'net.ipv4.conf.all.rp_filter': '0', 'net.ipv4.conf.eth0.rp_filter': '0', 'net.ipv4.vs.conntrack': '0', 'net.ipv4.vs.sync_threshold': '3\t0', ...over.sysctls };
  return {
    caps: { root: true, netRaw: over.netRaw ?? true, netAdmin: over.netAdmin ?? true, ipvs: 'yes', nftables: 'yes', nftBinary: true },
    module: (name) => over.modules?.[name] ?? 'loaded',
    sysctl: (name) => sysctls[name],
    iface: (name) => over.ifaces?.[name] ?? (name === 'eth0' || name === 'eth1' ? UP : { exists: false, up: false, multicast: false, ipv4: [] }),
  };
}

const bad = (fs: Finding[]): string[] => fs.filter((f) => f.status !== 'ok').map((f) => `${f.status} ${f.check}: ${f.detail}`);

test('a healthy DR/TUN/NAT director: every check ok, exit 0', () => {
  const fs = doctorFindings(config(PAIR), facts());
  assert.deepEqual(bad(fs), []);
  assert.equal(doctorExit(fs), 0);
  const checks = new Set(fs.map((f) => f.check));
  for (const c of ['capabilities', 'ip_vs module', 'scheduler module', 'forwarding', 'conntrack', 'rp_filter', 'VIP interface', 'sync interface']) assert.ok(checks.has(c), `no ${c} finding`);
  assert.deepEqual(fs.filter((f) => f.check === 'scheduler module').map((f) => f.detail), ['ip_vs_mh is loaded', 'ip_vs_wlc is loaded']);
});

const CASES: { name: string; f: Facts; want: RegExp; status: 'warn' | 'fail' }[] = [
  { name: 'no CAP_NET_RAW', f: facts({ netRaw: false }), want: /capabilities: missing CAP_NET_RAW/, status: 'fail' },
  { name: 'ip_vs not loaded yet', f: facts({ modules: { ip_vs: 'loadable' } }), want: /ip_vs module: ip_vs is not loaded/, status: 'warn' },
  { name: 'no IPVS at all', f: facts({ modules: { ip_vs: 'missing' } }), want: /ip_vs module: this kernel has no IPVS/, status: 'fail' },
  { name: 'a scheduler the kernel lacks', f: facts({ modules: { ip_vs_mh: 'missing' } }), want: /scheduler module: ip_vs_mh is not in this kernel/, status: 'fail' },
  { name: 'NAT without forwarding', f: facts({ sysctls: { 'net.ipv4.ip_forward': '0' } }), want: /forwarding: net\.ipv4\.ip_forward = 0/, status: 'fail' },
  { name: 'strict rp_filter on the VIP interface (all wins when larger)', f: facts({ sysctls: { 'net.ipv4.conf.all.rp_filter': '1' } }), want: /rp_filter: eth0: strict rp_filter/, status: 'warn' },
  { name: 'the VIP interface is down', f: facts({ ifaces: { eth0: { ...UP, up: false } } }), want: /VIP interface: eth0 is down \(VI_1 10\.1\.0\.100\)/, status: 'fail' },
  { name: 'the sync interface is missing', f: facts({ ifaces: { eth1: { exists: false, up: false, multicast: false, ipv4: [] } } }), want: /sync interface: eth1 does not exist/, status: 'fail' },
  { name: 'the sync interface has multicast off', f: facts({ ifaces: { eth1: { ...UP, multicast: false } } }), want: /sync interface: eth1 has multicast off/, status: 'fail' },
  { name: 'the sync interface has no IPv4 address', f: facts({ ifaces: { eth1: { ...UP, ipv4: [] } } }), want: /sync interface: eth1 has no IPv4 address/, status: 'fail' },
];

for (const c of CASES) {
  test(`doctor: ${c.name}`, () => {
    const fs = doctorFindings(config(PAIR), c.f);
    const hit = fs.find((f) => c.want.test(`${f.check}: ${f.detail}`));
    assert.ok(hit, `no finding matching ${String(c.want)} in\n${renderFindings(fs)}`);
    assert.equal(hit.status, c.status);
    assert.ok(hit.fix !== undefined && hit.fix.length > 0, 'a problem comes with its fix');
    assert.equal(doctorExit(fs), c.status === 'fail' ? 1 : 0);
    assert.equal(bad(fs).length, 1, `exactly one problem: ${bad(fs).join('; ')}`);
  });
}

test('dataplane auto on a kernel without IPVS is a warning, not a failure', () => {
  const fs = doctorFindings(config(PAIR.replace('dataplane: ipvs', 'dataplane: auto')), facts({ modules: { ip_vs: 'missing' } }));
  assert.match(bad(fs)[0] ?? '', /^warn ip_vs module: this kernel has no IPVS; dataplane: auto falls back/);
});

test('the real-server setup for DR and TUN, per virtual server, ready to paste; NAT servers get none', () => {
  const out = realServerSetup(config(PAIR));
  assert.equal(out, [
    '# web (tcp:10.1.0.100:80), DR: on each of 10.1.0.11, 10.1.0.12',
    'ip addr add 10.1.0.100/32 dev lo',
    'sysctl -w net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2',
    'printf "net.ipv4.conf.all.arp_ignore=1\\nnet.ipv4.conf.all.arp_announce=2\\n" > /etc/sysctl.d/90-lvs-real-server.conf',
    '',
    '# tunnelled (tcp:10.1.0.100:443), TUN (ipip): on each of 10.9.0.21',
    'modprobe ipip',
    'ip link set tunl0 up',
    'ip addr add 10.1.0.100/32 dev tunl0',
    'sysctl -w net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0',
    'sysctl -w net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2',
  ].join('\n'));
  assert.match(realServerSetup(config('virtualServers:\n  - { address: 10.0.0.1, port: 80, method: nat, realServers: [{ address: 10.2.0.1 }] }\n')), /^# No DR or TUN real servers/);
});
