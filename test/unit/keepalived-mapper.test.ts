// keepalived AST → lvsd config: each mapping rule, keepalived's defaults written out, and every
// directive that cannot be carried over reported as FILE:LINE: directive: why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { normaliseHex } from '../../daemon/config/keepalived/map-checker.js';
import { expandRange } from '../../daemon/config/keepalived/map-lvs.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { healthPlan, vrrpOptions } from '../../daemon/director/plan.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { diag, importText } from './keepalived-memfs.js';

const VI = (body: string, name = 'VI_1') => `vrrp_instance ${name} {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n${body}\n}\n`;
const VS = (body: string, head = '10.0.0.100 80') => `virtual_server ${head} {\n${body}\n}\n`;

test('router_id → node.name; keepalived defaults for a bare instance are written out', () => {
  const r = importText(`global_defs {\n router_id lb-1\n}\n${VI('')}`);
  assert.equal(r.config.node?.name, 'lb-1');
  const inst = r.config.vrrp?.instances?.[0];
  assert.deepEqual(inst, {
    name: 'VI_1',
    interface: 'eth0',
    virtualRouterId: 51,
    version: 2,
    advertInterval: '1s',
    virtualIpaddresses: ['10.0.0.100/24'],
  });
  assert.equal(r.complete, true);
});

test('instance settings: state, priority, nopreempt, preempt_delay, advert_int fractions, unicast', () => {
  const r = importText(
    VI(
      ' state MASTER\n priority 150\n nopreempt\n preempt_delay 2.5\n advert_int 0.25\n version 3\n' +
        ' unicast_src_ip 10.0.0.1\n unicast_peer {\n  10.0.0.2\n  10.0.0.3\n }',
    ),
  );
  const inst = r.config.vrrp?.instances?.[0];
  assert.equal(inst?.state, 'MASTER');
  assert.equal(inst.priority, 150);
  assert.equal(inst.preempt, false);
  assert.equal(inst.preemptDelay, '2500ms');
  assert.equal(inst.advertInterval, '250ms');
  assert.equal(inst.version, 3);
  assert.equal(inst.accept, true, "keepalived's accept mode is on unless no_accept / strict");
  assert.equal(inst.unicastSrcIp, '10.0.0.1');
  assert.deepEqual(inst.unicastPeers, ['10.0.0.2', '10.0.0.3']);
  assert.deepEqual(r.diagnostics, []);
});

test('accept mode: no_accept, vrrp_strict, and v2 where lvsd has none', () => {
  assert.equal(importText(VI(' version 3\n no_accept')).config.vrrp?.instances?.[0]?.accept, false);
  const strict = importText(`global_defs {\n vrrp_strict\n}\n${VI(' version 3')}`);
  assert.equal(strict.config.vrrp?.instances?.[0]?.accept, false);
  assert.deepEqual(diag(strict), ['2 vrrp_strict']);
  const v2 = importText(VI(' no_accept'));
  assert.equal(v2.config.vrrp?.instances?.[0]?.accept, undefined);
  assert.deepEqual(diag(v2), ['7 no_accept']);
});

test('version: global vrrp_version, and IPv6 VIPs force VRRPv3 like keepalived', () => {
  assert.equal(importText(`global_defs {\n vrrp_version 3\n}\n${VI('')}`).config.vrrp?.instances?.[0]?.version, 3);
  const v6 = importText('vrrp_instance V6 {\n interface eth0\n virtual_router_id 9\n virtual_ipaddress {\n  2001:db8::10\n }\n}');
  const inst = v6.config.vrrp?.instances?.[0];
  assert.equal(inst?.version, 3);
  assert.deepEqual(inst.virtualIpaddresses, ['2001:db8::10/128']);
});

test('virtual_ipaddress forms: bare address gets a host prefix, dev/label/scope/brd become an object, the rest is reported', () => {
  const r = importText(
    'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 1\n virtual_ipaddress {\n' +
      '  192.0.2.1\n  192.0.2.2/24 dev eth1 label eth1:vip\n  192.0.2.3/24 scope link\n  192.0.2.4/24 brd 192.0.2.255 no_track\n  not-an-ip\n }\n}',
  );
  assert.deepEqual(r.config.vrrp?.instances?.[0]?.virtualIpaddresses, [
    '192.0.2.1/32',
    { address: '192.0.2.2/24', dev: 'eth1', label: 'eth1:vip' },
    { address: '192.0.2.3/24', scope: 'link' },
    { address: '192.0.2.4/24', broadcast: '192.0.2.255' },
  ]);
  assert.deepEqual(diag(r), ['8 192.0.2.4/24', '9 not-an-ip']);
  assert.match(r.diagnostics[0]?.why ?? '', /: no_track$/);
});

test('virtual_ipaddress options peer, home, -nodad, noprefixroute, preferred_lft are carried (IPv4 preferred_lft reported: keepalived ignores it)', () => {
  const r = importText(
    'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 1\n version 3\n virtual_ipaddress {\n' +
      '  192.0.2.1/24 peer 192.0.2.200 noprefixroute\n  192.0.2.2/24 preferred_lft 30\n }\n virtual_ipaddress_excluded {\n' +
      '  2001:db8::1/64 -nodad home noprefixroute\n  2001:db8::2/128 preferred_lft forever\n  2001:db8::3/64 preferred_lft 60\n  2001:db8::4/64 peer 192.0.2.9\n }\n}',
  );
  const inst = r.config.vrrp?.instances?.[0];
  assert.deepEqual(inst?.virtualIpaddresses, [{ address: '192.0.2.1/24', peer: '192.0.2.200', noPrefixRoute: true }, '192.0.2.2/24']);
  assert.deepEqual(inst.virtualIpaddressesExcluded, [
    { address: '2001:db8::1/64', dad: true, home: true, noPrefixRoute: true },
    { address: '2001:db8::2/128', preferredLft: 'forever' },
    { address: '2001:db8::3/64', preferredLft: 60 },
    '2001:db8::4/64',
  ]);
  assert.deepEqual(diag(r), ['7 192.0.2.2/24', '13 2001:db8::4/64']);
  assert.match(r.diagnostics[0]?.why ?? '', /keepalived ignores it on IPv4/);
  assert.match(r.diagnostics[1]?.why ?? '', /peer 192\.0\.2\.9/);
  // The peer note (keepalived drops the address's prefix) travels with the VIP as a comment.
  assert.match(r.yaml, /peer's prefix applies/);
});

test('virtual_ipaddress_excluded is carried as excluded addresses (held, not advertised), either family; a duplicate is kept once', () => {
  const r = importText(VI(' virtual_ipaddress_excluded {\n  10.0.0.200/24\n  fd00::200/64\n  10.0.0.100/24\n }'));
  const inst = r.config.vrrp?.instances?.[0];
  assert.deepEqual(inst?.virtualIpaddresses, ['10.0.0.100/24']);
  assert.deepEqual(inst.virtualIpaddressesExcluded, ['10.0.0.200/24', 'fd00::200/64']);
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.complete, true);
  assert.match(r.yaml, /virtualIpaddressesExcluded:\n(\s+- .*\n){2}/);
});

test('no virtual_ipaddress: a VRRPv2 instance is carried without VIPs (excluded ones kept); VRRPv3 is refused as keepalived 2.2.7 refuses it', () => {
  const v2 = importText('vrrp_instance X {\n interface eth0\n virtual_router_id 5\n virtual_ipaddress_excluded {\n  10.0.0.7/24\n }\n}');
  const inst = v2.config.vrrp?.instances?.[0];
  assert.equal(inst?.version, 2);
  assert.equal(inst.virtualIpaddresses, undefined);
  assert.deepEqual(inst.virtualIpaddressesExcluded, ['10.0.0.7/24']);
  assert.deepEqual(v2.diagnostics, []);
  const v3 = importText('vrrp_instance X {\n interface eth0\n virtual_router_id 5\n version 3\n}');
  assert.equal(v3.config.vrrp, undefined);
  assert.deepEqual(v3.diagnostics.map((d) => `${d.line} ${d.directive}`), ['1 vrrp_instance']);
  assert.match(v3.diagnostics[0]?.why ?? '', /No VIP specified; at least one is required/);
});

test('an instance lvsd cannot run (no interface) is reported once, its body not line by line', () => {
  const r = importText('vrrp_instance X {\n virtual_router_id 5\n priority 100\n use_vmac\n}');
  assert.equal(r.config.vrrp, undefined);
  assert.deepEqual(r.diagnostics.map((d) => `${d.line} ${d.directive}: ${d.why}`), [
    '1 vrrp_instance: X: lvsd needs an interface; instance not carried over',
  ]);
});

test('authentication PASS is carried, truncated to the 8 characters keepalived uses; AH is reported', () => {
  const pass = importText(VI(' authentication {\n  auth_type PASS\n  auth_pass longpassword\n }'));
  assert.deepEqual(pass.config.vrrp?.instances?.[0]?.authentication, { type: 'PASS', password: 'longpass' });
  assert.match(pass.yaml, /only the first 8 characters/);
  const ah = importText(VI(' authentication {\n  auth_type AH\n  auth_pass x\n }'));
  assert.equal(ah.config.vrrp?.instances?.[0]?.authentication, undefined);
  assert.deepEqual(diag(ah), ['8 auth_type']);
});

test('vrrp_script → vrrp.scripts; track_script/interface/file with weights; reverse reported', () => {
  const r = importText(
    'vrrp_script chk {\n script "/usr/bin/pgrep -x nginx"\n interval 2\n timeout 1\n weight -20\n rise 2\n fall 3\n user nobody\n}\n' +
      'track_file prio {\n file /run/prio\n weight 5\n}\n' +
      VI(' track_script {\n  chk\n  missing\n }\n track_interface {\n  eth1\n  eth2 weight -10\n  eth3 weight 10 reverse\n }\n track_file {\n  prio\n  prio weight -2\n }'),
  );
  assert.deepEqual(r.config.vrrp?.scripts, {
    chk: { command: '/usr/bin/pgrep -x nginx', interval: '2s', timeout: '1s', weight: -20, rise: 2, fall: 3, user: 'nobody' },
  });
  const inst = r.config.vrrp.instances?.[0];
  assert.deepEqual(inst?.trackScripts, [{ name: 'chk' }]);
  assert.deepEqual(inst.trackInterfaces, [{ name: 'eth1' }, { name: 'eth2', weight: -10 }, { name: 'eth3', weight: 10 }]);
  assert.deepEqual(inst.trackFiles, [{ path: '/run/prio', weight: 5 }, { path: '/run/prio', weight: -2 }]);
  assert.deepEqual(diag(r), ['22 missing', '27 eth3']);
});

test('sync group: members, notify, group tracking copied to members, a member\'s weighted script not tracked (keepalived ignores it)', () => {
  const r = importText(
    'vrrp_script chk {\n script /bin/true\n weight -20\n}\n' +
      'vrrp_sync_group G {\n group {\n  A\n  B\n  GHOST\n }\n track_interface {\n  bond0\n }\n notify_master /bin/m\n}\n' +
      VI(' track_script {\n  chk\n }', 'A') +
      VI('', 'B'),
  );
  const [a, b] = r.config.vrrp?.instances ?? [];
  assert.deepEqual(r.config.vrrp?.syncGroups, [{ name: 'G', instances: ['A', 'B'], notify: { master: '/bin/m' } }]);
  assert.equal(a?.trackScripts, undefined);
  assert.deepEqual(a?.trackInterfaces, [{ name: 'bond0' }]);
  assert.deepEqual(b?.trackInterfaces, [{ name: 'bond0' }]);
  assert.match(r.yaml, /not tracked: track_script chk \(weight -20\): keepalived ignores weighted tracking on a member of sync group G/);
  assert.deepEqual(diag(r), ['9 GHOST']);
});

test('notify scripts keep their arguments; a user (and group) argument says who runs the hook', () => {
  const r = importText(VI(' notify_master "/etc/k/notify.sh MASTER"\n notify /etc/k/any.sh nobody nogroup\n notify_fault /etc/k/f.sh someuser'));
  assert.deepEqual(r.config.vrrp?.instances?.[0]?.notify, { master: '/etc/k/notify.sh MASTER', any: '/etc/k/any.sh', fault: '/etc/k/f.sh', users: { any: 'nobody:nogroup', fault: 'someuser' } });
  assert.deepEqual(diag(r), []);
});

test('global GARP settings, vrrp_min_garp, lvs_timeouts and lvs_sync_daemon with inst', () => {
  const r = importText(
    'global_defs {\n vrrp_garp_master_delay 10\n vrrp_garp_master_refresh 60\n vrrp_garp_interval 0.001\n' +
      ' lvs_timeouts tcp 900 tcpfin 120 udp 300\n lvs_sync_daemon eth1 inst VI_1 maxlen 1400 port 8849\n}\n' +
      VI(' garp_master_repeat 2'),
  );
  assert.deepEqual(r.config.vrrp?.garp, { masterDelay: '10s', masterRefresh: '60s' });
  // vrrp_garp_interval paces every interface's GARPs across instances (keepalived's queue), not one instance's burst.
  assert.deepEqual(r.config.vrrp.garpGroups, [{ interval: '1ms' }]);
  assert.deepEqual(r.config.vrrp.instances?.[0]?.garp, { masterRepeat: 2 });
  assert.deepEqual(r.config.ipvs, {
    timeouts: { tcp: '900s', tcpFin: '120s', udp: '300s' },
    syncDaemon: { interface: 'eth1', maxLen: 1400, port: 8849, syncId: 51 },
  });
  assert.deepEqual(importText(`global_defs {\n vrrp_min_garp\n}\n${VI('')}`).config.vrrp?.garp, { masterRepeat: 1, masterDelay: '0s' });
});

test('split-brain answer: vrrp_garp_lower_prio_*, vrrp_lower_prio_no_advert, vrrp_higher_prio_send_advert (global and per instance); strict mode forces them off', () => {
  const r = importText(
    'global_defs {\n vrrp_garp_lower_prio_repeat 2\n vrrp_garp_lower_prio_delay 1\n vrrp_lower_prio_no_advert\n vrrp_higher_prio_send_advert true\n}\n' +
      VI(' garp_lower_prio_repeat 3\n garp_lower_prio_delay 0.5\n lower_prio_no_advert false\n higher_prio_send_advert off'),
  );
  assert.deepEqual(r.config.vrrp?.garp, { lowerPrioRepeat: 2, lowerPrioDelay: '1s' });
  assert.equal(r.config.vrrp.lowerPrioNoAdvert, true);
  assert.equal(r.config.vrrp.higherPrioSendAdvert, true);
  const inst = r.config.vrrp.instances?.[0];
  assert.deepEqual(inst?.garp, { lowerPrioRepeat: 3, lowerPrioDelay: '500ms' });
  assert.equal(inst.lowerPrioNoAdvert, false);
  assert.equal(inst.higherPrioSendAdvert, false);
  assert.deepEqual(r.diagnostics, []);
  const strict = importText(`global_defs {\n vrrp_strict\n}\n${VI(' higher_prio_send_advert')}`).config.vrrp?.instances?.[0];
  assert.deepEqual([strict?.lowerPrioNoAdvert, strict?.higherPrioSendAdvert, strict?.garp], [true, false, { lowerPrioRepeat: 0, lowerPrioDelay: '0s' }]);
});

test('vrrp_startup_delay and vrrp_delay_after_boot → vrrp.startupDelay, vrrp.delayAfterBoot (the latter noted as keepalived 2.4\'s)', () => {
  const r = importText(`global_defs {\n vrrp_startup_delay 5.5\n vrrp_delay_after_boot 90\n}\n${VI('')}`);
  assert.equal(r.config.vrrp?.startupDelay, '5500ms');
  assert.equal(r.config.vrrp.delayAfterBoot, '90s');
  assert.deepEqual(r.diagnostics, []);
  assert.match(r.yaml, /startupDelay: 5500ms # from .*:2/);
  assert.match(r.yaml, /keepalived 2\.4's/);
});

test('disable_local_igmp → vrrp.disableLocalIgmp, and the imported config loads', () => {
  const r = importText(`global_defs {\n disable_local_igmp\n}\n${VI('')}`);
  assert.equal(r.config.vrrp?.disableLocalIgmp, true);
  assert.deepEqual(r.diagnostics, []);
  assert.match(r.yaml, /disableLocalIgmp: true # from .*:2/);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok && loaded.config.vrrp.disableLocalIgmp);
});

test('nftables NAME, nftables_priority, nftables_counters → vrrp.nftables (the VMAC IGMP/MLD table); nftables_ifindex reported; the config loads', () => {
  const r = importText(`global_defs {\n nftables ka_tab\n nftables_priority -5\n nftables_counters\n nftables_ifindex\n}\n${VI('')}`);
  assert.deepEqual(r.config.vrrp?.nftables, { table: 'ka_tab', priority: -5, counters: true });
  assert.deepEqual(r.diagnostics.map((d) => `${d.line} ${d.directive}`), ['5 nftables_ifindex']);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, JSON.stringify(loaded.ok ? '' : loaded.errors));
  assert.deepEqual(loaded.config.vrrp.nftables, { table: 'ka_tab', priority: -5, counters: true });
  const bare = importText(`global_defs {\n nftables\n}\n${VI('')}`);
  assert.equal(bare.config.vrrp?.nftables, undefined, 'a bare nftables keeps lvsd\'s own table name');
  assert.deepEqual(bare.diagnostics, []);
});

test('old per-instance lvs_sync_daemon_interface → ipvs.syncDaemon with the VRID as sync id', () => {
  const r = importText(VI(' lvs_sync_daemon_interface eth1'));
  assert.deepEqual(r.config.ipvs?.syncDaemon, { interface: 'eth1', syncId: 51 });
  assert.deepEqual(r.diagnostics, []);
});

test('virtual server: old lb_algo/lb_kind and new lvs_sched/lvs_method map the same', () => {
  const body = (s: string, m: string) => ` delay_loop 6\n ${s}\n ${m}\n protocol TCP\n real_server 10.0.1.1 80 {\n  weight 2\n }`;
  const old = importText(VS(body('lb_algo wrr', 'lb_kind DR'))).config.virtualServers?.[0];
  const neu = importText(VS(body('lvs_sched wrr', 'lvs_method DR'))).config.virtualServers?.[0];
  assert.deepEqual(old, neu);
  assert.deepEqual(old, { address: '10.0.0.100', port: 80, protocol: 'tcp', method: 'dr', scheduler: 'wrr', realServers: [{ address: '10.0.1.1', port: 80, weight: 2 }] });
});

test('virtual server options: persistence, ops, quorum, hysteresis, sorry server, alpha/omega, scheduler flags', () => {
  const r = importText(
    VS(
      ' lvs_sched sh\n flag-2\n sh-fallback\n lvs_method NAT\n protocol UDP\n ops\n persistence_timeout\n persistence_granularity 255.255.255.0\n' +
        ' quorum 3\n hysteresis 1\n quorum_up "/bin/q up"\n quorum_down /bin/qd\n sorry_server 10.0.9.9 8080\n sorry_server_lvs_method DR\n alpha\n omega\n inhibit_on_failure\n' +
        ' real_server 10.0.1.1 80 {\n }',
      '10.0.0.100 53',
    ),
  );
  const vs = r.config.virtualServers?.[0];
  assert.equal(vs?.protocol, 'udp');
  assert.deepEqual(vs.schedulerFlags, ['sh-fallback', 'sh-port']);
  assert.deepEqual(vs.persistence, { timeout: '360s', netmask: '255.255.255.0' });
  assert.equal(vs.onePacket, true);
  assert.equal(vs.quorum, 3);
  assert.equal(vs.hysteresis, 1);
  assert.deepEqual(vs.notify, { quorumUp: '/bin/q up', quorumDown: '/bin/qd' });
  assert.deepEqual(vs.sorryServer, { address: '10.0.9.9', port: 8080, method: 'dr' });
  assert.equal(vs.alpha, true);
  assert.equal(vs.omega, true);
  assert.equal(vs.inhibitOnFailure, true);
  assert.deepEqual(r.diagnostics, []);
});

test('TUN with GUE on the service is passed to each real server; a real server may override the method', () => {
  const r = importText(VS(' lvs_method TUN type gue port 6080 csum\n real_server 10.0.1.1 80 {\n }\n real_server 10.0.1.2 80 {\n  lvs_method DR\n }'));
  const vs = r.config.virtualServers?.[0];
  assert.equal(vs?.method, 'tun');
  assert.deepEqual(vs.realServers, [
    { address: '10.0.1.1', port: 80, weight: 1, tunnel: { type: 'gue', port: 6080, checksum: 'csum' } },
    { address: '10.0.1.2', port: 80, weight: 1, method: 'dr' },
  ]);
});

test('checker timing: checker over real server over virtual server over keepalived defaults', () => {
  const r = importText(
    VS(' delay_loop 10\n connect_timeout 4\n real_server 10.0.1.1 80 {\n  retry 5\n  TCP_CHECK {\n   connect_timeout 2\n  }\n }\n real_server 10.0.1.2 80 {\n  TCP_CHECK {\n  }\n }'),
  );
  const [a, b] = r.config.virtualServers?.[0]?.realServers ?? [];
  assert.deepEqual(a?.healthCheck, { type: 'tcp', interval: '10s', timeout: '2s', rise: 1, fall: 1, retry: 5, delayBeforeRetry: '1s', warmup: '10s' });
  assert.deepEqual(b?.healthCheck, { type: 'tcp', interval: '10s', timeout: '4s', rise: 1, fall: 1, retry: 1, delayBeforeRetry: '1s', warmup: '10s' });
  const bare = importText(VS(' real_server 10.0.1.1 80 {\n  HTTP_GET {\n  }\n }')).config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual(bare, { type: 'http', interval: '60s', timeout: '5s', rise: 1, fall: 1, retry: 1, delayBeforeRetry: '3s', warmup: '60s', http: { protocol: '1.0' } });
});

test('identical checks of every real server are written once on the virtual server', () => {
  const rs = (ip: string) => ` real_server ${ip} 80 {\n  TCP_CHECK {\n   connect_timeout 2\n  }\n }\n`;
  const same = importText(VS(' delay_loop 3\n' + rs('10.0.1.1') + rs('10.0.1.2'))).config.virtualServers?.[0];
  assert.equal(same?.healthCheck?.type, 'tcp');
  assert.ok(same.realServers.every((s) => s.healthCheck === undefined));
  const differ = importText(VS(' delay_loop 3\n' + rs('10.0.1.1') + ' real_server 10.0.1.2 80 {\n }\n')).config.virtualServers?.[0];
  assert.equal(differ?.healthCheck, undefined);
  assert.equal(differ?.realServers[0]?.healthCheck?.type, 'tcp');
});

test('HTTP_GET/SSL_GET: url, digest, status ranges, virtualhost, regex, SNI; every url block carried over', () => {
  const r = importText(
    VS(
      ' virtualhost vs.example\n real_server 10.0.1.1 443 {\n  SSL_GET {\n   url {\n    path /h\n    digest 9B3A0C85A887A256D6939DA88AABD8CD\n    status_code 200-299 301 bad\n    regex "ok"\n   }\n' +
        '   url {\n    path /second\n   }\n   enable_sni\n   connect_port 8443\n   bindto 10.0.0.5\n   bind_if eth0\n  }\n }',
      '10.0.0.100 443',
    ),
  );
  const hc = r.config.virtualServers?.[0]?.healthCheck;
  assert.equal(hc?.type, 'https');
  // keepalived requires every url to pass: both pages, each with its own settings.
  assert.deepEqual(hc.http, {
    urls: [{ path: '/h', digest: '9b3a0c85a887a256d6939da88aabd8cd', status: ['200-299', 301], bodyRegex: 'ok' }, { path: '/second' }],
    host: 'vs.example', protocol: '1.0', tlsVerify: false, sni: 'vs.example',
  });
  assert.equal(hc.connectPort, 8443);
  assert.equal(hc.bindTo, '10.0.0.5');
  assert.equal(hc.bindInterface, 'eth0');
  assert.deepEqual(diag(r), ['8 status_code']);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  assert.deepEqual([loaded.config.virtualServers[0]?.realServers[0]?.healthCheck.http?.path, loaded.config.virtualServers[0]?.realServers[0]?.moreChecks.map((m) => m.http?.path)], ['/h', ['/second']]);
  // One url stays the one-page form.
  const one = importText(VS(' real_server 10.0.1.1 80 {\n  HTTP_GET {\n   url {\n    path /only\n    status_code 200\n   }\n  }\n }')).config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual(one?.http, { path: '/only', status: [200], protocol: '1.0' });
  // A 2nd url with another virtualhost: lvsd sends one Host per check, reported.
  const hosts = importText(VS(' real_server 10.0.1.1 80 {\n  HTTP_GET {\n   url {\n    path /a\n    virtualhost a.example\n   }\n   url {\n    path /b\n    virtualhost b.example\n   }\n  }\n }'));
  assert.equal(hosts.config.virtualServers?.[0]?.healthCheck?.http?.host, 'a.example');
  assert.deepEqual(diag(hosts), ['10 virtualhost']);
});

test('url regex options: regex_no_match, offsets, caseless/multiline/dotall rewritten for JavaScript, regex_stack a note', () => {
  const url = (body: string) => importText(VS(` real_server 10.0.1.1 80 {\n  HTTP_GET {\n   url {\n    path /h\n${body}\n   }\n  }\n }`));
  const page = (r: ReturnType<typeof importText>) => r.config.virtualServers?.[0]?.healthCheck?.http;
  const r = url('    regex "^OK$"\n    regex_no_match\n    regex_min_offset 2\n    regex_max_offset 40\n    regex_options caseless\n    regex_stack 32768 65536');
  // PCRE2's $ also matches before a final newline; JavaScript's only at the end, so it is rewritten.
  assert.deepEqual(page(r), { path: '/h', bodyRegex: '^OK(?=\\n?(?![\\s\\S]))', bodyRegexFlags: 'i', bodyRegexNoMatch: true, bodyRegexMinOffset: 2, bodyRegexMaxOffset: 40, protocol: '1.0' });
  assert.deepEqual(diag(r), []);
  assert.match(r.yaml, /regex_stack at .*nothing to size/);
  assert.equal(r.complete, true);
  // multiline and dotall become the pattern itself (PCRE2's newline is LF only); unknown names are warnings.
  const ml = url('    regex "a.b$"\n    regex_options multiline dotall\n    regex_options no_such ungreedy');
  assert.equal(page(ml)?.bodyRegex, 'a[\\s\\S]b(?=\\n|(?![\\s\\S]))');
  assert.equal(page(ml)?.bodyRegexFlags, undefined);
  assert.equal(ml.complete, true, 'an unknown option name loses nothing: keepalived ignores it');
  assert.match(ml.yaml, /no_such is not a PCRE2 option/);
  assert.match(ml.yaml, /regex_options ungreedy: no effect/);
  // keepalived drops the offsets when min > max, and the regex options without a regex.
  const bad = url('    regex "x"\n    regex_min_offset 9\n    regex_max_offset 3');
  assert.deepEqual(page(bad), { path: '/h', bodyRegex: 'x', protocol: '1.0' });
  assert.deepEqual(diag(bad), ['7 regex_min_offset']);
  const none = url('    regex_no_match\n    regex_options caseless');
  assert.deepEqual(page(none), { path: '/h', protocol: '1.0' });
  assert.deepEqual(diag(none), ['6 regex_no_match', '7 regex_options']);
  // keepalived resolves \-escapes in a regex outside quotes too: `a\.b` is "a.b" (any character), `a\\.b` a dot.
  assert.equal(page(url('    regex a\\.b'))?.bodyRegex, 'a[^\\n]b');
  assert.equal(page(url('    regex a\\\\.b'))?.bodyRegex, 'a\\.b');
  assert.equal(page(url('    regex "a\\\\.b"'))?.bodyRegex, 'a\\.b');
  // What JavaScript cannot say is reported, not guessed; utf is reported (lvsd matches bytes).
  assert.deepEqual(diag(url('    regex "(?>a+)b"')), ['6 regex']);
  const utf = url('    regex "caf\u00e9"\n    regex_options utf');
  assert.deepEqual(diag(utf), ['7 regex_options']);
  // The output passes check-config, and the health plan carries every setting to the checker.
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  const check = healthPlan(loaded.config).targets[0]?.check.http;
  assert.deepEqual([check?.bodyRegexFlags, check?.bodyRegexNoMatch, check?.bodyRegexMinOffset, check?.bodyRegexMaxOffset, check?.protocol], ['i', true, 2, 40, '1.0']);
});

test('http_protocol 1.0 / 1.0C / 1.0c / 1.1; keepalived\'s default 1.0 written out; a bad value reported; fast_recovery a note', () => {
  const proto = (line: string) => importText(VS(` real_server 10.0.1.1 80 {\n  HTTP_GET {\n   ${line}\n   url {\n    path /\n   }\n  }\n }`));
  for (const [line, want] of [['http_protocol 1.1', '1.1'], ['http_protocol 1.0C', '1.0C'], ['http_protocol 1.0c', '1.0C'], ['http_protocol 1.0', '1.0'], ['fast_recovery', '1.0']] as const) {
    const r = proto(line);
    assert.equal(r.config.virtualServers?.[0]?.healthCheck?.http?.protocol, want, line);
    assert.deepEqual(diag(r), [], line);
  }
  const bad = proto('http_protocol 2');
  assert.equal(bad.config.virtualServers?.[0]?.healthCheck?.http?.protocol, '1.0');
  assert.deepEqual(diag(bad), ['4 http_protocol']);
  assert.match(proto('fast_recovery').yaml, /fast_recovery: lvsd checks every url at each interval/);
});

test('startup_script / shutdown_script [user [group]] and their _timeout → node.startupScript / shutdownScript', () => {
  const r = importText('global_defs {\n router_id lb\n startup_script "/etc/lvs/up.sh now" www adm\n startup_script_timeout 20\n shutdown_script /etc/lvs/down.sh\n startup_script /second.sh\n}\n');
  assert.deepEqual(r.config.node, { name: 'lb', startupScript: { command: '/etc/lvs/up.sh now', user: 'www:adm', timeout: '20s' }, shutdownScript: { command: '/etc/lvs/down.sh' } });
  // keepalived keeps the first startup_script ("startup script already specified").
  assert.deepEqual(diag(r), ['6 startup_script']);
  const bad = importText('global_defs {\n shutdown_script_timeout 20\n startup_script /x\n startup_script_timeout 0\n}\n');
  assert.deepEqual(bad.config.node, { startupScript: { command: '/x' } });
  assert.deepEqual(diag(bad), ['2 shutdown_script_timeout', '4 startup_script_timeout']);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  assert.deepEqual(loaded.config.node.startupScript, { command: '/etc/lvs/up.sh now', timeoutMs: 20_000, user: 'www:adm' });
  assert.deepEqual(loaded.config.node.shutdownScript, { command: '/etc/lvs/down.sh', timeoutMs: 10_000 });
});

test('log_all_failures on a checker, or checker_log_all_failures for all (keepalived ORs them) → healthCheck.logAllFailures', () => {
  const rs = (ip: string, extra: string) => ` real_server ${ip} 80 {\n  TCP_CHECK {\n${extra}  }\n }\n`;
  const one = importText(VS(rs('10.0.1.1', '   log_all_failures\n') + rs('10.0.1.2', '   log_all_failures off\n')));
  assert.deepEqual(one.config.virtualServers?.[0]?.realServers.map((s) => s.healthCheck?.logAllFailures), [true, undefined]);
  assert.deepEqual(diag(one), []);
  const all = importText(`global_defs {\n checker_log_all_failures\n no_checker_emails\n}\n${VS(rs('10.0.1.1', '   log_all_failures off\n'))}`);
  assert.equal(all.config.virtualServers?.[0]?.healthCheck?.logAllFailures, true);
  assert.deepEqual(diag(all), []);
  const loaded = loadConfigText(all.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  assert.equal(healthPlan(loaded.config).targets[0]?.check.logAllFailures, true);
});

test('MISC_CHECK → exec (misc_timeout, misc_dynamic, retry 0); DNS_CHECK defaults SOA "." retry 3', () => {
  const misc = importText(VS(' delay_loop 5\n real_server 10.0.1.1 80 {\n  MISC_CHECK {\n   misc_path "/bin/chk 10.0.1.1"\n   misc_dynamic\n  }\n }')).config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual(misc, { type: 'exec', interval: '5s', timeout: '5s', rise: 1, fall: 1, retry: 0, delayBeforeRetry: '1s', warmup: '5s', exec: { command: '/bin/chk 10.0.1.1', dynamicWeight: true } });
  const dns = importText(VS(' delay_loop 5\n real_server 10.0.1.1 53 {\n  DNS_CHECK {\n  }\n }', '10.0.0.100 53')).config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual(dns?.dns, { name: '.', type: 'SOA' });
  assert.equal(dns.retry, 3);
  assert.equal(dns.delayBeforeRetry, '5s');
});

test('UDP_CHECK: keepalived free-form hex; without require_reply a note, not a diagnostic (lvsd behaves the same)', () => {
  assert.equal(normaliseHex(['Ab12f', '3', '456', '546443123'], false), 'ab120f034506546443120' + '3');
  const ok = importText(VS(' protocol UDP\n real_server 10.0.1.1 53 {\n  UDP_CHECK {\n   payload 01 02\n   require_reply 0a0b\n  }\n }', '10.0.0.100 53'));
  assert.deepEqual(ok.config.virtualServers?.[0]?.healthCheck?.udp, { payload: '0102', expect: '/^(?:$|\\x0a(?:$|\\x0b))/', maxReplyLength: 255 }); // keepalived's comparison: udp-reply-length.test.ts
  assert.deepEqual(ok.diagnostics, []);
  const silent = importText(VS(' protocol UDP\n real_server 10.0.1.1 53 {\n  UDP_CHECK {\n  }\n }', '10.0.0.100 53'));
  assert.deepEqual(diag(silent), [], 'the import is complete (exit 0): nothing changes behaviour');
  assert.equal(silent.complete, true);
  assert.equal(silent.config.virtualServers?.[0]?.healthCheck?.udp?.expect, undefined);
  assert.match(silent.yaml, /no require_reply: up unless an ICMP port-unreachable comes back/);
  // require_reply without bytes: any reply, which lvsd writes as a regex matching everything.
  const any = importText(VS(' protocol UDP\n real_server 10.0.1.1 53 {\n  UDP_CHECK {\n   require_reply\n  }\n }', '10.0.0.100 53'));
  assert.deepEqual(diag(any), []);
  const loaded = loadConfigText(any.yaml);
  assert.ok(loaded.ok);
  const target = healthPlan(loaded.config).targets[0];
  assert.deepEqual(target?.check.udp?.expect, { regex: '^' });
});

test('a second checker becomes moreChecks (every checker must pass); checkers lvsd does not have are reported', () => {
  const r = importText(VS(' real_server 10.0.1.1 80 {\n  BFD_CHECK {\n  }\n  TCP_CHECK {\n  }\n  HTTP_GET {\n  }\n }\n real_server 10.0.1.2 80 {\n  TCP_CHECK {\n  }\n  HTTP_GET {\n  }\n }'));
  const vs = r.config.virtualServers?.[0];
  assert.equal(vs?.healthCheck?.type, 'tcp');
  assert.deepEqual(vs.moreChecks?.map((c) => c.type), ['http'], 'the same list on every real server is written once on the service');
  assert.ok(vs.realServers.every((s) => s.moreChecks === undefined));
  assert.deepEqual(diag(r), ['3 BFD_CHECK']);
  // Different lists stay on their real servers.
  const differ = importText(VS(' real_server 10.0.1.1 80 {\n  TCP_CHECK {\n  }\n  HTTP_GET {\n  }\n }\n real_server 10.0.1.2 80 {\n  TCP_CHECK {\n  }\n }')).config.virtualServers?.[0];
  assert.equal(differ?.moreChecks, undefined);
  assert.deepEqual(differ?.realServers.map((s) => s.moreChecks?.map((c) => c.type)), [['http'], undefined]);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  assert.deepEqual(loaded.config.virtualServers[0]?.realServers.map((s) => [s.healthCheck.type, ...s.moreChecks.map((m) => m.type)]), [['tcp', 'http'], ['tcp', 'http']]);
});

test('SMTP_CHECK → smtp with helo_name (keepalived\'s default name written out); each host block a checker of its own', () => {
  const plain = importText(VS(' real_server 10.0.1.1 25 {\n  SMTP_CHECK {\n   connect_timeout 3\n  }\n }', '10.0.0.100 25'));
  const hc = plain.config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual([hc?.type, hc?.timeout, hc?.retry, hc?.smtp], ['smtp', '3s', 1, { helo: 'smtpchecker.keepalived.org' }]);
  assert.deepEqual(diag(plain), []);
  const hosts = importText(VS(
    ' real_server 10.0.1.1 25 {\n  SMTP_CHECK {\n   helo_name lb.example.org\n   host {\n    connect_ip 10.0.1.1\n    connect_port 25\n   }\n' +
      '   host {\n    connect_ip 10.0.1.1\n    connect_port 587\n    connect_timeout 2\n    frobnicate 1\n   }\n  }\n }',
    '10.0.0.100 25',
  ));
  const rs = hosts.config.virtualServers?.[0];
  assert.deepEqual([rs?.healthCheck?.type, rs?.healthCheck?.connectPort, rs?.healthCheck?.smtp?.helo], ['smtp', 25, 'lb.example.org']);
  assert.deepEqual(rs?.moreChecks?.map((c) => [c.type, c.connectPort, c.timeout, c.smtp?.helo]), [['smtp', 587, '2s', 'lb.example.org']]);
  assert.deepEqual(diag(hosts), ['13 frobnicate']);
  const loaded = loadConfigText(hosts.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  assert.deepEqual(loaded.config.virtualServers[0]?.realServers[0]?.moreChecks.map((m) => [m.type, m.connectPort]), [['smtp', 587]]);
});

test('virtual_server_group: one lvsd service per member, ranges expanded, fwmark members, RS ports dropped for fwmark', () => {
  const r = importText(
    'virtual_server_group G {\n 10.0.0.1 80\n 10.0.0.2-3 80\n fwmark 9\n}\n' + VS(' lvs_sched rr\n real_server 10.0.1.1 80 {\n }', 'group G'),
  );
  const vss = r.config.virtualServers ?? [];
  assert.deepEqual(
    vss.map((v) => v.fwmark ?? `${v.address ?? ''}:${v.port ?? 0}`),
    ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', 9],
  );
  assert.deepEqual(vss[3]?.realServers, [{ address: '10.0.1.1', weight: 1 }]);
  assert.equal(vss[3].protocol, undefined);
  assert.match(r.yaml, /member of virtual_server_group G/);
  assert.deepEqual(r.diagnostics, []);
});

test('address ranges as keepalived writes them', () => {
  assert.deepEqual(expandRange('192.168.200.3-5'), ['192.168.200.3', '192.168.200.4', '192.168.200.5']);
  assert.deepEqual(expandRange('10.0.0.254-10.0.1.1'), ['10.0.0.254', '10.0.0.255', '10.0.1.0', '10.0.1.1']);
  assert.deepEqual(expandRange('10.0.0.9/30'), ['10.0.0.8', '10.0.0.9', '10.0.0.10', '10.0.0.11']);
  assert.deepEqual(expandRange('2001:db8::8-a'), ['2001:db8::8', '2001:db8::9', '2001:db8::a']);
  assert.match(String(expandRange('10.0.0.0/16')), /holds 65536 addresses/);
  assert.match(String(expandRange('10.0.0.5-2')), /not an address range/);
});

test('inhibit_on_failure on every real server becomes the service setting; disagreement is reported', () => {
  const rs = (ip: string, inhibit: string) => ` real_server ${ip} 80 {\n  ${inhibit}\n }\n`;
  const all = importText(VS(rs('10.0.1.1', 'inhibit_on_failure') + rs('10.0.1.2', 'inhibit_on_failure yes')));
  assert.equal(all.config.virtualServers?.[0]?.inhibitOnFailure, true);
  assert.deepEqual(all.diagnostics, []);
  const mixed = importText(VS(rs('10.0.1.1', 'inhibit_on_failure') + rs('10.0.1.2', '')));
  assert.equal(mixed.config.virtualServers?.[0]?.inhibitOnFailure, undefined);
  assert.deepEqual(diag(mixed), ['3 inhibit_on_failure']);
});

test('unsupported and unknown directives are reported with file, line and a reason; complete is false', () => {
  const r = importText(
    'global_defs {\n notification_email {\n  a@b\n }\n vrrp_iptables\n totally_unknown 1\n}\nstatic_routes {\n 10.0.0.0/8 via 1.2.3.4 proto static\n}\n' + VI(' use_ipvlan\n track_bfd {\n }'),
  );
  assert.equal(r.complete, false);
  assert.deepEqual(
    r.diagnostics.map((d) => `${d.file}:${d.line}: ${d.directive}`),
    ['/etc/keepalived/keepalived.conf:2: notification_email', '/etc/keepalived/keepalived.conf:5: vrrp_iptables', '/etc/keepalived/keepalived.conf:6: totally_unknown', '/etc/keepalived/keepalived.conf:9: 10.0.0.0/8', '/etc/keepalived/keepalived.conf:17: use_ipvlan', '/etc/keepalived/keepalived.conf:18: track_bfd'],
  );
  assert.match(r.diagnostics[2]?.why ?? '', /not supported in global_defs/);
  assert.match(r.diagnostics[0]?.why ?? '', /no smtp_server: keepalived sends no mail/);
});

test('diagnostics in included files name those files the way the main file was named (here: absolute)', () => {
  const r = importText('include conf.d/*.conf\n', { '/etc/keepalived/conf.d/a.conf': `\n${VI(' use_ipvlan')}` });
  assert.deepEqual(r.diagnostics.map((d) => `${d.file}:${d.line}`), ['/etc/keepalived/conf.d/a.conf:8']);
  assert.match(r.yaml, /# from \/etc\/keepalived\/conf\.d\/a\.conf:2/);
});

test('the YAML: header says complete or lists what is missing; comments point to source lines; it parses back', () => {
  const text = `global_defs {\n router_id lb1\n}\n${VI(' priority 120')}`;
  const r = importText(text);
  assert.match(r.yaml, /^# lvsd configuration imported from \/etc\/keepalived\/keepalived\.conf by/);
  assert.match(r.yaml, /Complete: every directive was carried over/);
  assert.match(r.yaml, /name: lb1 # from \/etc\/keepalived\/keepalived\.conf:2/);
  assert.match(r.yaml, /priority: 120 # from \/etc\/keepalived\/keepalived\.conf:10/);
  assert.deepEqual(YAML.parse(r.yaml), JSON.parse(JSON.stringify(r.config)));
  const bad = importText(VI(' use_ipvlan'));
  assert.match(bad.yaml, /INCOMPLETE: 1 directive\(s\) were not carried over:\n#   \/etc\/keepalived\/keepalived\.conf:7: use_ipvlan: an IPv4 instance on an ipvlan needs an address/);
});

test('names lvsd does not accept are rewritten consistently and reported', () => {
  const r = importText('vrrp_script "chk nginx" {\n script /bin/true\n}\n' + VI(' track_script {\n  "chk nginx"\n }', '"VI 1"') + 'vrrp_sync_group G {\n group {\n  "VI 1"\n }\n}');
  assert.deepEqual(Object.keys(r.config.vrrp?.scripts ?? {}), ['chk_nginx']);
  assert.equal(r.config.vrrp?.instances?.[0]?.name, 'VI_1');
  assert.deepEqual(r.config.vrrp.instances[0].trackScripts, [{ name: 'chk_nginx' }]);
  assert.deepEqual(r.config.vrrp.syncGroups?.[0]?.instances, ['VI_1']);
  assert.deepEqual(diag(r), ['1 vrrp_script', '4 vrrp_instance']);
});

test('what keepalived itself ignores is dropped with a note, not carried: other-family VIP, bad advert_int, foreign flags, ops on TCP, duplicates', () => {
  const r = importText(
    VI(' advert_int 300\n unicast_peer {\n  10.0.0.2\n  10.0.0.2\n }\n track_interface {\n  eth1\n  eth1 weight 5\n }\n virtual_ipaddress {\n  2001:db8::1\n }') +
      VS(' lvs_sched rr\n sh-port\n ops\n protocol TCP\n real_server 10.0.1.1 80 {\n }'),
  );
  const inst = r.config.vrrp?.instances?.[0];
  assert.deepEqual(inst?.virtualIpaddresses, ['10.0.0.100/24']);
  assert.equal(inst.advertInterval, '1s');
  assert.deepEqual(inst.unicastPeers, ['10.0.0.2']);
  assert.deepEqual(inst.trackInterfaces, [{ name: 'eth1' }]);
  const vs = r.config.virtualServers?.[0];
  assert.equal(vs?.schedulerFlags, undefined);
  assert.equal(vs?.onePacket, undefined);
  assert.deepEqual(r.diagnostics, []);
  for (const note of ['keepalived ignores a VIP of the other address family', 'advert_int 300', 'listed twice', 'sh-port dropped', 'ops dropped']) assert.ok(r.yaml.includes(note), note);
});

test('VRRPv2 cannot carry a fractional advert_int: rounded and reported; thresholds the wrong way round are reported', () => {
  const v2 = importText(VI(' advert_int 1.6'));
  assert.equal(v2.config.vrrp?.instances?.[0]?.advertInterval, '2s');
  assert.deepEqual(diag(v2), ['7 advert_int']);
  const th = importText(VS(' real_server 10.0.1.1 80 {\n  uthreshold 10\n  lthreshold 20\n }'));
  assert.deepEqual(th.config.virtualServers?.[0]?.realServers[0], { address: '10.0.1.1', port: 80, weight: 1, upperThreshold: 10 });
  assert.deepEqual(diag(th), ['4 lthreshold']);
});

test('fwmark services: the real server port moves to the check (keepalived checks it); without one the check is reported', () => {
  const withPort = importText(VS(' real_server 10.0.1.1 8080 {\n  TCP_CHECK {\n  }\n }', 'fwmark 3'));
  const rs = withPort.config.virtualServers?.[0];
  assert.deepEqual(rs?.realServers, [{ address: '10.0.1.1', weight: 1 }]);
  assert.equal(rs.healthCheck?.connectPort, 8080);
  assert.deepEqual(withPort.diagnostics, []);
  const noPort = importText(VS(' real_server 10.0.1.1 {\n  HTTP_GET {\n  }\n }\n real_server 10.0.1.2 {\n  TCP_CHECK {\n   connect_port 81\n  }\n }', 'fwmark 3'));
  assert.equal(noPort.config.virtualServers?.[0]?.realServers[0]?.healthCheck, undefined);
  assert.equal(noPort.config.virtualServers?.[0]?.realServers[1]?.healthCheck?.connectPort, 81);
  assert.deepEqual(diag(noPort), ['3 HTTP_GET']);
});

test('a virtual server without a port: every port (0), persistent as keepalived makes it, real server ports dropped, check ports kept', () => {
  const r = importText(VS(' lb_kind DR\n real_server 10.0.1.1 80 {\n  TCP_CHECK {\n  }\n }\n real_server 10.0.1.2 {\n  TCP_CHECK {\n   connect_port 81\n  }\n }', '10.0.0.100'));
  const vs = r.config.virtualServers?.[0];
  assert.equal(vs?.port, 0);
  assert.deepEqual(vs.persistence, { timeout: '360s' });
  assert.deepEqual(vs.realServers.map((x) => [x.address, x.port, x.healthCheck?.connectPort]), [['10.0.1.1', undefined, 80], ['10.0.1.2', undefined, 81]]);
  assert.deepEqual(diag(r), []);
  // What it writes is a config lvsd takes.
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, `the output passes check-config: ${JSON.stringify(loaded.ok ? [] : loaded.errors)}`);
  assert.equal(loaded.config.virtualServers[0]?.id, 'tcp:10.0.0.100:0');
  // Its own persistence is kept.
  const own = importText(VS(' persistence_timeout 50\n real_server 10.0.1.1 {\n }', '10.0.0.100'));
  assert.deepEqual(own.config.virtualServers?.[0]?.persistence, { timeout: '50s' });
});

test('sorry_server_inhibit → sorryServer.inhibit (the sorry server waits at weight 0)', () => {
  const r = importText(VS(' sorry_server 10.0.9.9 8080\n sorry_server_inhibit\n real_server 10.0.1.1 80 {\n }'));
  assert.deepEqual(r.config.virtualServers?.[0]?.sorryServer, { address: '10.0.9.9', port: 8080, inhibit: true });
  assert.deepEqual(diag(r), []);
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok);
  assert.equal(loaded.config.virtualServers[0]?.sorryServer?.inhibit, true);
});

test('persistence_engine sip → persistence.engine; without persistence or another engine it is reported', () => {
  const r = importText(VS(' protocol UDP\n persistence_timeout 60\n persistence_engine sip\n real_server 10.0.1.1 5060 {\n }', '10.0.0.100 5060'));
  assert.deepEqual(r.config.virtualServers?.[0]?.persistence, { timeout: '60s', engine: 'sip' });
  assert.deepEqual(diag(r), []);
  assert.ok(loadConfigText(r.yaml).ok);
  assert.deepEqual(diag(importText(VS(' persistence_engine sip\n real_server 10.0.1.1 80 {\n }'))), ['2 persistence_engine']);
  assert.deepEqual(diag(importText(VS(' persistence_timeout 60\n persistence_engine h323\n real_server 10.0.1.1 80 {\n }'))), ['3 persistence_engine']);
});

test('global_defs vrrp_rt_priority → vrrp.realtimePriority; out of range is reported, not carried over', () => {
  const r = importText(`global_defs {\n vrrp_rt_priority 50\n}\n${VI('')}`);
  assert.equal(r.config.vrrp?.realtimePriority, 50);
  assert.deepEqual(diag(r), []);
  const bad = importText(`global_defs {\n vrrp_rt_priority 150\n}\n${VI('')}`);
  assert.equal(bad.config.vrrp?.realtimePriority, undefined);
  assert.deepEqual(diag(bad), ['2 vrrp_rt_priority']);
});

test('PING_CHECK becomes a ping check with the checker timing; its output passes check-config and plans a ping target', () => {
  const r = importText(VS(' real_server 10.0.1.1 80 {\n  PING_CHECK {\n   connect_timeout 2\n   retry 2\n   delay_before_retry 3\n   delay_loop 4\n  }\n }'));
  assert.deepEqual(diag(r), []);
  const hc = r.config.virtualServers?.[0]?.healthCheck ?? r.config.virtualServers?.[0]?.realServers[0]?.healthCheck;
  assert.deepEqual({ type: hc?.type, interval: hc?.interval, timeout: hc?.timeout, retry: hc?.retry, delayBeforeRetry: hc?.delayBeforeRetry }, { type: 'ping', interval: '4s', timeout: '2s', retry: 2, delayBeforeRetry: '3s' });
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  const t = healthPlan(loaded.config).targets[0];
  assert.equal(t?.check.type, 'ping');
  assert.equal(t.check.timeoutMs, 2000);
});

test('FILE_CHECK takes the path of its track_file, its own weight over the track_file\'s (0 = the track_file\'s), and reverse', () => {
  const files = 'track_file maint {\n file /run/lvsd/maint\n weight 0\n}\ntrack_file load {\n file "/run/lvsd/load"\n weight -2 reverse\n}\n';
  const r = importText(files + VS([
    ' real_server 10.0.1.1 80 {\n  TCP_CHECK {\n  }\n  FILE_CHECK {\n   track_file maint\n  }\n }',
    ' real_server 10.0.1.2 80 {\n  FILE_CHECK {\n   track_file load\n  }\n }',
    ' real_server 10.0.1.3 80 {\n  FILE_CHECK {\n   track_file load\n   weight 5\n  }\n }',
    ' real_server 10.0.1.4 80 {\n  FILE_CHECK {\n   track_file load\n   weight 0\n  }\n }',
    ' real_server 10.0.1.5 80 {\n  FILE_CHECK {\n   track_file missing\n  }\n }',
  ].join('\n')));
  assert.deepEqual(diag(r), ['36 track_file'], 'a FILE_CHECK over an unknown track_file is reported, not carried over');
  const rs = r.config.virtualServers?.[0]?.realServers ?? [];
  assert.deepEqual(rs[0]?.moreChecks?.map((c) => [c.type, c.file]), [['file', { path: '/run/lvsd/maint', weight: 0 }]]);
  assert.deepEqual(rs[1]?.healthCheck?.file, { path: '/run/lvsd/load', weight: -2, reverse: true });
  assert.deepEqual(rs[2]?.healthCheck?.file, { path: '/run/lvsd/load', weight: 5 }, 'the FILE_CHECK weight replaces the track_file\'s weight and reverse');
  assert.deepEqual(rs[3]?.healthCheck?.file, { path: '/run/lvsd/load', weight: -2, reverse: true }, 'weight 0 on the FILE_CHECK takes the track_file\'s');
  assert.equal(rs[4]?.healthCheck, undefined);
  assert.equal(rs[1].healthCheck.interval, '1s');
  const loaded = loadConfigText(r.yaml);
  assert.ok(loaded.ok, 'the output passes check-config');
  const plan = healthPlan(loaded.config).targets;
  assert.deepEqual(plan.find((t) => t.address === '10.0.1.2')?.check.file, { path: '/run/lvsd/load', weight: -2, reverse: true });
  assert.equal(plan.find((t) => t.address === '10.0.1.1')?.moreChecks?.[0]?.type, 'file');
});

test('vrrp_track_process and track_process are carried: process and parameters, param_match, full_command, quorum(_max), weight [reverse], delays', () => {
  const r = importText(
    'vrrp_track_process NGINX {\n process nginx\n weight 10 reverse\n quorum 2\n delay 1.5\n terminate_delay 3\n}\n' +
      'vrrp_track_process HAP {\n process /usr/sbin/haproxy -f "/etc/ha proxy.cfg"\n param_match partial\n quorum_max 0\n full_command\n}\n' +
      'vrrp_track_process EMPTY {\n weight 2\n}\n' +
      VI(' track_process {\n  NGINX\n  HAP weight -20 reverse\n  EMPTY\n  NONE\n }'),
  );
  assert.deepEqual(r.config.vrrp?.processes, {
    NGINX: { process: 'nginx', quorum: 2, weight: 10, reverse: true, forkDelay: '1500ms', terminateDelay: '3s' },
    HAP: { process: '/usr/sbin/haproxy', parameters: ['-f', '/etc/ha proxy.cfg'], paramMatch: 'partial', fullCommand: true, quorumMax: 0, quorum: 0 },
  });
  assert.deepEqual(r.config.vrrp.instances?.[0]?.trackProcesses, [{ name: 'NGINX' }, { name: 'HAP', weight: -20, reverse: true }]);
  assert.deepEqual(diag(r), ['14 vrrp_track_process', '26 EMPTY', '27 NONE']);
  assert.match(r.yaml, /quorum lowered to 0/);
});

test('track_process in a sync group: weights kept (keepalived 2.2.7 applies them there, measured: 150 → 130 with weight -20)', () => {
  const r = importText(
    'vrrp_track_process P {\n process nginx\n}\n' + VI(' track_process {\n  P weight -20\n }') + 'vrrp_sync_group G {\n group {\n  VI_1\n }\n}\n',
  );
  assert.deepEqual(r.config.vrrp?.instances?.[0]?.trackProcesses, [{ name: 'P', weight: -20 }]);
});

test('sync group members without sync_group_tracking_weight, as keepalived 2.2.7 runs them (measured): weighted scripts and files of weight ≠ 1 not tracked, weight 1 files and weighted interfaces at 0; with it (or global_tracking, its old name) every weight as written', () => {
  const conf = (extra: string): string =>
    'vrrp_script w {\n script /bin/false\n weight -20\n}\nvrrp_script u {\n script /bin/false\n}\ntrack_file f {\n file /run/f\n}\n' +
    VI(' track_script {\n  w\n  u\n }\n track_file {\n  f\n  f weight 5\n }\n track_interface {\n  eth1 weight -10\n  eth2\n }') +
    `vrrp_sync_group G {\n group {\n  VI_1\n }\n${extra}}\n`;
  const r = importText(conf(''));
  const i = r.config.vrrp?.instances?.[0];
  assert.deepEqual(i?.trackScripts, [{ name: 'u' }]);
  assert.deepEqual(i.trackFiles, [{ path: '/run/f', weight: 0 }]);
  assert.deepEqual(i.trackInterfaces, [{ name: 'eth1', weight: 0 }, { name: 'eth2' }]);
  assert.match(r.yaml, /not tracked: track_script w \(weight -20\), track_file \/run\/f \(weight 5\): keepalived ignores weighted tracking on a member of sync group G/);
  assert.deepEqual(diag(r), []);
  for (const kw of ['sync_group_tracking_weight', 'global_tracking']) {
    const k = importText(conf(` ${kw}\n`));
    const j = k.config.vrrp?.instances?.[0];
    assert.deepEqual(j?.trackScripts, [{ name: 'w' }, { name: 'u' }], kw);
    assert.deepEqual(j.trackFiles, [{ path: '/run/f', weight: 1 }, { path: '/run/f', weight: 5 }], kw);
    assert.deepEqual(j.trackInterfaces, [{ name: 'eth1', weight: -10 }, { name: 'eth2' }], kw);
    assert.deepEqual(diag(k), [], kw);
  }
});

test('track_src_ip is carried with a configured source (unicast_src_ip / mcast_src_ip); without one it tracks nothing and is reported', () => {
  const r = importText(VI(' unicast_src_ip 10.0.0.1\n track_src_ip'));
  assert.equal(r.config.vrrp?.instances?.[0]?.trackSrcIp, true);
  assert.deepEqual(r.diagnostics, []);
  const none = importText(VI(' track_src_ip'));
  assert.equal(none.config.vrrp?.instances?.[0]?.trackSrcIp, undefined);
  assert.match(none.diagnostics[0]?.why ?? '', /needs unicast_src_ip or mcast_src_ip/);
});

test('ha_suspend → haSuspend (and the output passes check-config); on a fwmark service dropped with a note, as keepalived clears it', () => {
  const r = importText(VI('') + VS(' ha_suspend\n real_server 10.0.1.1 80 {\n  TCP_CHECK {\n  }\n }'));
  assert.equal(r.config.virtualServers?.[0]?.haSuspend, true);
  assert.deepEqual(r.diagnostics, []);
  const loaded = loadConfigText(YAML.stringify(r.config), 'out.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.map((e) => e.message).join('\n'));
  assert.equal(loaded.config.virtualServers[0]?.haSuspend, true);
  const fw = importText(VS(' ha_suspend\n real_server 10.0.1.1 80 {\n }', 'fwmark 7'));
  assert.equal(fw.config.virtualServers?.[0]?.haSuspend, undefined);
  assert.deepEqual(fw.diagnostics, []);
  assert.match(fw.yaml, /ha_suspend dropped/);
});

test('checker bind_port and fwmark → bindPort and fwmark; fwmark on a check lvsd cannot mark is reported, fwmark 0 is no mark', () => {
  const r = importText(VS(' real_server 10.0.1.1 80 {\n  TCP_CHECK {\n   bind_port 40123\n   fwmark 42\n  }\n }'));
  // One real server: its check is the virtual server's.
  const hc = r.config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual([hc?.bindPort, hc?.fwmark], [40123, 42]);
  assert.deepEqual(r.diagnostics, []);
  const loaded = loadConfigText(YAML.stringify(r.config), 'out.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.map((e) => e.message).join('\n'));
  const ssl = importText(VS(' real_server 10.0.1.1 443 {\n  SSL_GET {\n   url {\n    path /\n    status_code 200\n   }\n   bind_port 40123\n   fwmark 42\n  }\n }', '10.0.0.100 443'));
  const shc = ssl.config.virtualServers?.[0]?.healthCheck;
  assert.deepEqual([shc?.bindPort, shc?.fwmark], [40123, undefined]);
  assert.deepEqual(diag(ssl), ['9 fwmark']);
  assert.match(ssl.diagnostics[0]?.why ?? '', /marks only tcp, plain http and smtp checks/);
  const zero = importText(VS(' real_server 10.0.1.1 80 {\n  TCP_CHECK {\n   fwmark 0\n  }\n }'));
  assert.equal(zero.config.virtualServers?.[0]?.healthCheck?.fwmark, undefined);
  assert.deepEqual(zero.diagnostics, []);
});

test('strict mode (vrrp_strict or strict_mode) drops what keepalived 2.2.7 resets — authentication, preempt_delay, down_timer_adverts — reports unicast peers (keepalived refuses them), and stays reported for its VIP filter only', () => {
  const body = ' version 2\n authentication {\n  auth_type PASS\n  auth_pass secret\n }\n preempt_delay 10\n down_timer_adverts 5';
  // A VRRPv2 instance's accept mode off is reported besides (lvsd has none for v2), on strict_mode or on the instance.
  for (const [conf, line, v2] of [[VI(` strict_mode on\n${body}`), '7 strict_mode', '7 strict_mode'], [`global_defs {\n vrrp_strict\n}\n${VI(body)}`, '2 vrrp_strict', '4 vrrp_instance']] as const) {
    const r = importText(conf);
    const i = r.config.vrrp?.instances?.[0];
    assert.deepEqual([i?.authentication, i?.preemptDelay, i?.downTimerAdverts], [undefined, undefined, undefined], line);
    assert.match(r.yaml, /authentication, preempt_delay, down_timer_adverts dropped: keepalived's strict mode resets them/, line);
    assert.deepEqual(diag(r), [line, v2].sort());
    assert.match(r.diagnostics[0]?.why ?? '', /^lvsd installs no VIP filter .* the rest of strict mode is carried/, line);
  }
  const u = importText(VI(' strict_mode\n version 3\n unicast_peer {\n  10.0.0.2\n }'));
  assert.deepEqual(diag(u), ['7 strict_mode', '9 unicast_peer']);
  assert.match(u.diagnostics[1]?.why ?? '', /refuses unicast peers in strict mode/);
  const off = importText(VI(' strict_mode off\n preempt_delay 10'));
  assert.deepEqual(diag(off), [], 'strict_mode off is keepalived\'s default: nothing to report');
  assert.equal(off.config.vrrp?.instances?.[0]?.preemptDelay, '10s');
});

test('unicast_fault_no_peer: with peers nothing to carry; without, reported (keepalived keeps the instance in FAULT, lvsd would run it multicast)', () => {
  const withPeers = importText(VI(' unicast_fault_no_peer\n unicast_peer {\n  10.0.0.2\n }'));
  assert.deepEqual(diag(withPeers), []);
  assert.deepEqual(withPeers.config.vrrp?.instances?.[0]?.unicastPeers, ['10.0.0.2']);
  const none = importText(VI(' unicast_fault_no_peer'));
  assert.deepEqual(diag(none), ['7 unicast_fault_no_peer']);
  assert.match(none.diagnostics[0]?.why ?? '', /keeps this instance in FAULT \("Cannot use unicast without any peers"\)/);
});

test('what stays not carried says how lvsd covers it: skip_check_adv_addr, track_group, linkbeat, net_namespace, mcast_dst_ip', () => {
  const r = importText(
    'global_defs {\n vrrp_skip_check_adv_addr\n linkbeat_use_polling\n net_namespace blue\n}\ntrack_group G {\n group {\n  VI_1\n }\n}\n' + VI(' skip_check_adv_addr'),
  );
  const why = Object.fromEntries(r.diagnostics.map((d) => [d.directive, d.why]));
  assert.match(why.vrrp_skip_check_adv_addr ?? '', /^nothing to skip: lvsd accepts an advert whose address list differs/);
  assert.equal(why.skip_check_adv_addr, why.vrrp_skip_check_adv_addr);
  assert.match(why.track_group ?? '', /does not watch them after, so one deleted behind its back puts no instance in FAULT/);
  assert.match(why.linkbeat_use_polling ?? '', /rtnetlink link events only .* track_script/);
  assert.match(why.net_namespace ?? '', /NetworkNamespacePath=/);
});

test('mcast_dst_ip → multicastGroup with its line, and it loads; another family or a non-multicast address reported, on a unicast instance dropped (keepalived alike)', () => {
  const r = importText(VI(' mcast_dst_ip 224.0.0.88'));
  assert.deepEqual(diag(r), []);
  assert.match(r.yaml, /multicastGroup: 224\.0\.0\.88 # from \/etc\/keepalived\/keepalived\.conf:7/);
  const loaded = loadConfigText(r.yaml, 'lvsd.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
  assert.equal(vrrpOptions(loaded.config).instances[0]?.multicastGroup, '224.0.0.88');
  assert.equal(normalizeOptions(vrrpOptions(loaded.config)).instances[0]?.multicastGroup, '224.0.0.88');
  for (const bad of ['ff02::88', '10.0.0.9']) {
    const b = importText(VI(` mcast_dst_ip ${bad}`));
    assert.deepEqual(diag(b), ['7 mcast_dst_ip'], bad);
    assert.equal(b.config.vrrp?.instances?.[0]?.multicastGroup, undefined, bad);
  }
  const u = importText(VI(' mcast_dst_ip 224.0.0.88\n unicast_peer {\n  10.0.0.2\n }'));
  assert.deepEqual(diag(u), []);
  assert.equal(u.config.vrrp?.instances?.[0]?.multicastGroup, undefined);
  assert.throws(() => normalizeOptions({ instances: [{ name: 'A', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], multicastGroup: 'ff02::12' }] }), /multicastGroup: ff02::12 is not an IPv4 multicast address/);
  const bad = loadConfigText(r.yaml.replace('multicastGroup: 224.0.0.88', 'multicastGroup: ff02::12'), 'lvsd.yaml');
  assert.ok(!bad.ok);
  assert.match(bad.errors.map((e) => `${e.line}:${e.path}: ${e.message}`).join('\n'), /^\d+:vrrp\.instances\[0\]\.multicastGroup: ff02::12 is not an IPv4 multicast address \(224\.0\.0\.0\/4\) like the instance's VIPs$/m);
});
