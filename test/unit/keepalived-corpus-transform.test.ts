// The transforms the corpus behaviour harnesses apply (test/support/keepalived-corpus.ts): what they
// change, what they keep, and that lvsd's loader accepts their output for every corpus file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { loadConfigText } from '../../daemon/config/load.js';
import {
  corpusFiles, importCorpusFile, ipvsOnlyConfig, lineDiff, mergeConfigs, serviceKeyOfLine, serviceKeys, thresholdLines, vipsOf, vrrpPair, withoutSyncDaemon,
} from '../support/keepalived-corpus.js';

const PLACE = { listen: '127.0.0.1:9300', socket: '/tmp/x/lvsd.sock', stateFile: '/tmp/x/state.json' };

test('corpusFiles: the ten corpus files, the include tree as its keepalived.conf', () => {
  const files = corpusFiles();
  assert.equal(files.length, 10);
  assert.ok(files.includes('include-tree/keepalived.conf'));
});

test('ipvsOnlyConfig: drops vrrp and the sync daemon, pins ipvs, places api and state; keeps the rest', () => {
  const { config } = importCorpusFile('lvs-nat-sorry.conf');
  assert.ok(config.vrrp !== undefined && config.ipvs?.syncDaemon !== undefined);
  const out = ipvsOnlyConfig(config, PLACE);
  assert.equal(out.vrrp, undefined);
  assert.equal(out.ipvs, undefined, 'the sync daemon was the only ipvs setting');
  assert.equal(out.dataplane, 'ipvs');
  assert.deepEqual(out.api, { listen: PLACE.listen, socket: PLACE.socket });
  assert.equal(out.stateFile, PLACE.stateFile);
  assert.deepEqual(out.virtualServers, config.virtualServers);
  const dr = ipvsOnlyConfig(importCorpusFile('lvs-dr-web.conf').config, PLACE);
  assert.deepEqual(dr.ipvs, { timeouts: { tcp: '900s', tcpFin: '120s', udp: '300s' } });
});

test('every corpus file with virtual servers, and all of them merged, pass the loader after ipvsOnlyConfig', () => {
  const withVs = corpusFiles().filter((f) => (importCorpusFile(f).config.virtualServers?.length ?? 0) > 0);
  assert.equal(withVs.length, 7);
  const merged = mergeConfigs(withVs.map((f) => importCorpusFile(f).config));
  for (const [name, config] of [...withVs.map((f) => [f, importCorpusFile(f).config] as const), ['merged', merged] as const]) {
    const r = loadConfigText(YAML.stringify(ipvsOnlyConfig(config, PLACE)), `${name}.yaml`);
    assert.deepEqual(r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`), [], name);
  }
  assert.equal(merged.virtualServers?.length, withVs.reduce((n, f) => n + (importCorpusFile(f).config.virtualServers?.length ?? 0), 0));
  assert.deepEqual(merged.ipvs?.timeouts, { tcp: '900s', tcpFin: '120s', udp: '300s' });
});

test('mergeConfigs refuses a service programmed twice and conflicting timeouts', () => {
  const a = importCorpusFile('vs-group.conf').config;
  assert.throws(() => mergeConfigs([a, a]), /-t 10\.20\.0\.10:80, .*programmed by more than one file/);
  const t1 = { ipvs: { timeouts: { tcp: '1s' } }, virtualServers: [] };
  const t2 = { ipvs: { timeouts: { tcp: '2s' } }, virtualServers: [] };
  assert.throws(() => mergeConfigs([t1, t2]), /different IPVS timeouts/);
});

test('serviceKeys and serviceKeyOfLine agree on ipvsadm -S spelling', () => {
  assert.deepEqual(serviceKeys(importCorpusFile('vs-group.conf').config), ['-t 10.20.0.10:80', '-t 10.20.0.11:80', '-t 10.20.0.12:80', '-f 7']);
  assert.deepEqual(serviceKeys(importCorpusFile('fwmark-services.conf').config), ['-f 1', '-u 192.0.2.50:53']);
  assert.deepEqual(serviceKeys({ virtualServers: [{ address: 'fd00::1', port: 53, protocol: 'udp', method: 'nat', realServers: [] }, { address: '10.0.0.1', port: 3868, protocol: 'sctp', method: 'nat', realServers: [] }] }),
    ['-u [fd00::1]:53', '--sctp-service 10.0.0.1:3868']);
  assert.equal(serviceKeyOfLine('-A -t 10.20.0.10:80 -s rr'), '-t 10.20.0.10:80');
  assert.equal(serviceKeyOfLine('-a -f 7 -r 10.20.1.1:80 -g -w 1'), '-f 7');
  assert.equal(serviceKeyOfLine('-A -u [fd00::1]:53 -s wlc'), '-u [fd00::1]:53');
});

test('thresholdLines: one line per destination with its service, counters dropped, sorted', () => {
  const text = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port            Forward Weight Uthreshold Lthreshold ActiveConn InActConn
TCP  10.30.0.10:8000 wrr
  -> 10.30.1.2:8000               Masq    10     1000       800        3          7
  -> 10.30.1.1:8000               Masq    10     0          0          0          0
FWM  7 rr
  -> 10.20.1.1:80                 Route   1      0          0          0          0
`;
  assert.deepEqual(thresholdLines(text), [
    'FWM 7 -> 10.20.1.1:80 Route 1 0 0',
    'TCP 10.30.0.10:8000 -> 10.30.1.1:8000 Masq 10 0 0',
    'TCP 10.30.0.10:8000 -> 10.30.1.2:8000 Masq 10 1000 800',
  ]);
});

test('lineDiff: the lines only one side has', () => {
  assert.deepEqual(lineDiff(['a', 'b', 'c'], ['b', 'd']), { onlyA: ['a', 'c'], onlyB: ['d'] });
});

test('withoutSyncDaemon: comments out lvs_sync_daemon lines only, and says which', () => {
  const r = withoutSyncDaemon('global_defs {\n    router_id x\n    lvs_sync_daemon eth1 VI_INSIDE id 51\n}\n# lvs_sync_daemon in a comment\n');
  assert.deepEqual(r.lines, [3]);
  assert.equal(r.text, 'global_defs {\n    router_id x\n# netns harness, no IPVS in this kernel: lvs_sync_daemon eth1 VI_INSIDE id 51\n}\n# lvs_sync_daemon in a comment\n');
  assert.deepEqual(withoutSyncDaemon('vrrp_instance A {\n}\n').lines, []);
});

test('vrrpPair: the corpus interface names, unicast addresses from the file, lvsd as the lower peer director', () => {
  const place = { listen: '127.0.0.1:9180', socket: '/tmp/s', stateFile: '/tmp/st' };
  const p = vrrpPair(importCorpusFile('cloud-unicast.conf').config, { priorityDelta: -10, place });
  assert.deepEqual(p.interfaces, ['ens5', 'ens6']);
  assert.deepEqual(p.keepalivedAddresses, { ens5: ['10.99.0.1/24', '172.31.1.10/22', 'fd00:31::10/64'], ens6: ['10.99.1.1/24'] });
  assert.deepEqual(p.lvsdAddresses, { ens5: ['10.99.0.2/24', '172.31.2.10/22', 'fd00:31::20/64'], ens6: ['10.99.1.2/24'] });
  const vrrp = p.lvsdConfig.vrrp as { instances: { name: string; priority: number; state?: string; unicastSrcIp?: string; unicastPeers?: string[]; trackInterfaces?: unknown }[] };
  const [v4, v6] = vrrp.instances;
  assert.deepEqual([v4?.priority, v4?.state, v4?.unicastSrcIp, v4?.unicastPeers], [140, 'BACKUP', '172.31.2.10', ['172.31.1.10', '172.31.3.10']]);
  assert.deepEqual([v6?.priority, v6?.unicastSrcIp, v6?.unicastPeers], [140, 'fd00:31::20', ['fd00:31::10']]);
  assert.deepEqual(v4?.trackInterfaces, [{ name: 'ens5' }, { name: 'ens6', weight: -30 }], 'tracking untouched');
  assert.deepEqual((p.lvsdConfig.node as { name: string }).name, 'edge-a-peer');
  const nat = vrrpPair(importCorpusFile('lvs-nat-sorry.conf').config, { priorityDelta: -10, place }).lvsdConfig;
  assert.equal(nat.virtualServers, undefined);
  assert.equal(nat.ipvs, undefined, 'no sync daemon on the VRRP harness');
  assert.deepEqual(vrrpPair(importCorpusFile('sync-groups.conf').config, { priorityDelta: -10, place }).interfaces, ['bond0', 'bond0.100', 'bond0.200']);
  // A higher peer keeps the configured state.
  const up = vrrpPair(importCorpusFile('haproxy-pair.conf').config, { priorityDelta: 10, place }).lvsdConfig.vrrp as { instances: { priority: number; state?: string }[] };
  assert.deepEqual([up.instances[0]?.priority, up.instances[0]?.state], [111, 'MASTER']);
});

test('vrrpPair output passes the loader for every corpus file', () => {
  const place = { listen: '127.0.0.1:9180', socket: '/tmp/s', stateFile: '/tmp/st' };
  for (const f of corpusFiles()) {
    const r = loadConfigText(YAML.stringify(vrrpPair(importCorpusFile(f).config, { priorityDelta: -10, place }).lvsdConfig), `${f}.yaml`);
    assert.deepEqual(r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`), [], f);
  }
});

test('vipsOf: the address without its prefix, on its dev or the instance interface', () => {
  const inst = importCorpusFile('haproxy-pair.conf').config.vrrp?.instances?.[0];
  assert.ok(inst);
  assert.deepEqual(vipsOf(inst), [{ address: '192.168.10.100', ifname: 'eth0' }]);
  assert.deepEqual(vipsOf({ ...inst, interface: 'x', virtualIpaddresses: ['fd00::1/128', { address: '10.0.0.1/24', dev: 'eth9' }] }),
    [{ address: 'fd00::1', ifname: 'x' }, { address: '10.0.0.1', ifname: 'eth9' }]);
});
