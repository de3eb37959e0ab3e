// The corpus of real-world-shaped keepalived.conf files (test/fixtures/keepalived): each one is a
// config keepalived itself accepts (`keepalived -t`), imports with exactly the expected diagnostics,
// keeps what matters (instances, VIPs, services, real servers), and its YAML parses back to the same
// object with every "from FILE:LINE" comment pointing at a real directive of the source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { importKeepalived, type ImportResult } from '../../daemon/config/keepalived/index.js';
import { formatError } from '../../daemon/config/errors.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { requireCommands } from '../support/prereq.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/keepalived');

interface Expectation {
  file: string;
  /** "LINE directive" of every diagnostic, in order. */
  diagnostics: string[];
  instances: number;
  vips: number;
  virtualServers: number;
  realServers: number;
  /** keepalived -t messages that are expected here (interfaces of another host, deliberate old keywords). */
  keepalivedNoise?: RegExp[];
  check?: (r: ImportResult) => void;
}

const CORPUS: Expectation[] = [
  {
    file: 'haproxy-pair.conf',
    diagnostics: [],
    instances: 1,
    vips: 1,
    virtualServers: 0,
    realServers: 0,
    check: (r) => {
      assert.deepEqual([r.config.vrrp?.scriptUser, r.config.vrrp?.scriptSecurity], ['root', true]);
      assert.deepEqual(r.config.vrrp?.scripts?.chk_haproxy, { command: '/usr/bin/killall -0 haproxy', interval: '2s', timeout: '1s', weight: -20, rise: 2, fall: 2 });
      const inst = r.config.vrrp.instances?.[0];
      assert.deepEqual(inst?.virtualIpaddresses, [{ address: '192.168.10.100/24', dev: 'eth0', label: 'eth0:vip' }]);
      // '!' starts a comment anywhere outside quotes, so keepalived itself reads "s3cret" here.
      assert.deepEqual(inst.authentication, { type: 'PASS', password: 's3cret' });
      assert.equal(inst.notify?.master, '/etc/keepalived/notify.sh MASTER');
    },
  },
  {
    file: 'lvs-dr-web.conf',
    diagnostics: [],
    instances: 1,
    vips: 3,
    virtualServers: 4,
    realServers: 9,
    check: (r) => {
      const [http, https] = r.config.virtualServers ?? [];
      assert.equal(http?.method, 'dr');
      assert.deepEqual(http.healthCheck?.http, { path: '/healthz', status: [200], protocol: '1.0' }, 'weights differ, checks do not: one check on the service');
      assert.ok(http.realServers.every((s) => s.healthCheck === undefined));
      assert.deepEqual(https?.schedulerFlags, ['sh-port']);
      assert.deepEqual(https.healthCheck?.http, { path: '/healthz', status: ['200-299', 301], host: 'www.example.com', protocol: '1.0', tlsVerify: false, sni: 'www.example.com' });
      assert.deepEqual(r.config.ipvs?.timeouts, { tcp: '900s', tcpFin: '120s', udp: '300s' });
    },
  },
  {
    file: 'lvs-nat-sorry.conf',
    diagnostics: [],
    instances: 2,
    vips: 2,
    virtualServers: 1,
    realServers: 3,
    keepalivedNoise: [/Unknown keyword 'nb_get_retry'/],
    check: (r) => {
      const vs = r.config.virtualServers?.[0];
      assert.deepEqual(vs?.sorryServer, { address: '10.2.0.250', port: 8080 });
      assert.equal(vs.quorum, 2);
      assert.equal(vs.inhibitOnFailure, true);
      assert.equal(vs.healthCheck?.retry, 3, 'the old nb_get_retry is carried as retry');
      assert.deepEqual(r.config.vrrp?.syncGroups?.[0]?.instances, ['VI_OUTSIDE', 'VI_INSIDE']);
      assert.deepEqual(r.config.ipvs?.syncDaemon, { interface: 'eth1', syncId: 51 });
    },
  },
  {
    file: 'cloud-unicast.conf',
    diagnostics: [],
    instances: 2,
    vips: 2,
    virtualServers: 0,
    realServers: 0,
    check: (r) => {
      const [v4, v6] = r.config.vrrp?.instances ?? [];
      assert.equal(v4?.version, 3);
      assert.equal(v4.advertInterval, '500ms');
      assert.deepEqual(v4.unicastPeers, ['172.31.2.10', '172.31.3.10']);
      assert.deepEqual(v4.trackInterfaces, [{ name: 'ens5' }, { name: 'ens6', weight: -30 }]);
      assert.equal(v4.accept, true);
      assert.equal(v6?.accept, false);
      assert.deepEqual(v6.virtualIpaddresses, ['fd00:31:100::10/128']);
    },
  },
  {
    file: 'sync-groups.conf',
    diagnostics: [],
    instances: 2,
    vips: 3,
    virtualServers: 0,
    realServers: 0,
    check: (r) => {
      const [pub, priv] = r.config.vrrp?.instances ?? [];
      assert.equal(pub?.trackScripts, undefined, 'keepalived 2.2.7 ignores a weighted script on a sync group member');
      assert.deepEqual(priv?.trackFiles, [{ path: '/run/keepalived/maintenance', weight: -100 }]);
      assert.deepEqual(r.config.vrrp?.syncGroups?.[0]?.notify, { any: '/usr/local/bin/vrrp-event' });
    },
  },
  {
    file: 'fwmark-services.conf',
    diagnostics: [],
    instances: 1,
    vips: 1,
    virtualServers: 2,
    realServers: 4,
    check: (r) => {
      const [fw, dns] = r.config.virtualServers ?? [];
      assert.equal(fw?.fwmark, 1);
      assert.equal(fw.protocol, undefined);
      assert.deepEqual(fw.persistence, { timeout: '600s', netmask: '255.255.255.0' });
      assert.equal(fw.healthCheck?.connectPort, 443);
      assert.equal(dns?.onePacket, true);
      assert.deepEqual(dns.healthCheck?.dns, { name: 'health.example.net', type: 'A' });
    },
  },
  {
    file: 'vs-group.conf',
    diagnostics: [],
    instances: 1,
    vips: 3,
    virtualServers: 4,
    realServers: 8,
    keepalivedNoise: [/has port specified - port will be ignored/],
  },
  {
    file: 'checkers.conf',
    diagnostics: [],
    instances: 1,
    vips: 1,
    virtualServers: 2,
    realServers: 8,
    check: (r) => {
      const types = r.config.virtualServers?.[0]?.realServers.map((s) => s.healthCheck?.type ?? 'none');
      assert.deepEqual(types, ['tcp', 'http', 'https', 'exec', 'dns', 'ping', 'smtp']);
      assert.equal(r.config.virtualServers?.[1]?.healthCheck?.type, 'udp');
      const smtp = r.config.virtualServers[0]?.realServers[6]?.healthCheck;
      assert.equal(smtp?.smtp?.helo, 'lvs.example.com');
    },
  },
  {
    file: 'v2-auth-tun.conf',
    diagnostics: [],
    instances: 1,
    vips: 1,
    virtualServers: 1,
    realServers: 2,
    keepalivedNoise: [/Truncating auth_pass to 8 characters/],
    check: (r) => {
      assert.equal(r.config.vrrp?.instances?.[0]?.authentication?.password, 'longpass');
      assert.equal(r.config.vrrp.instances[0].advertInterval, '2s');
      const vs = r.config.virtualServers?.[0];
      assert.deepEqual(vs?.schedulerFlags, ['mh-port']);
      assert.deepEqual(vs.realServers[0]?.tunnel, { type: 'gue', port: 6080, checksum: 'csum' });
      assert.equal(vs.realServers[1]?.method, 'dr');
    },
  },
  {
    file: 'include-tree/keepalived.conf',
    diagnostics: [],
    instances: 1,
    vips: 1,
    virtualServers: 1,
    realServers: 1,
    check: (r) => {
      assert.equal(r.files.length, 3);
      assert.match(r.yaml, /# from \/\S+\/include-tree\/conf\.d\/20-web\.conf:\d+/);
    },
  },
];

// keepalived on this host has none of the corpus's interfaces; that is all these messages say.
const HOST_NOISE = [/interface .* doesn't exist/, /Non-existent interface specified in configuration/, /^$/];

test('the corpus covers every fixture file', () => {
  const onDisk: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        // An include tree is one fixture: its main file.
        onDisk.push(path.relative(FIXTURES, path.join(dir, e.name, 'keepalived.conf')));
      } else onDisk.push(path.relative(FIXTURES, path.join(dir, e.name)));
    }
  };
  walk(FIXTURES);
  assert.deepEqual(onDisk.sort(), CORPUS.map((c) => c.file).sort());
});

for (const c of CORPUS) {
  test(`corpus ${c.file}: keepalived itself accepts it`, () => {
    requireCommands('keepalived');
    let output: string;
    try {
      output = execFileSync('keepalived', ['-t', '-n', '-l', '-f', path.join(FIXTURES, c.file)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
    } catch (e) {
      // keepalived -t exits non-zero on warnings too; judge by the messages.
      const err = e as { stdout?: string; stderr?: string };
      output = `${err.stdout ?? ''}${err.stderr ?? ''}`;
    }
    const allowed = [...HOST_NOISE, ...(c.keepalivedNoise ?? [])];
    const unexpected = output.split('\n').filter((l) => !allowed.some((re) => re.test(l)));
    assert.deepEqual(unexpected, []);
  });

  test(`corpus ${c.file}: imports with exactly the expected diagnostics and content`, () => {
    const r = importKeepalived(path.join(FIXTURES, c.file), { configId: 'lb1' });
    assert.deepEqual(r.diagnostics.map((d) => `${d.line} ${d.directive}`), c.diagnostics);
    assert.equal(r.complete, c.diagnostics.length === 0);
    const instances = r.config.vrrp?.instances ?? [];
    assert.equal(instances.length, c.instances);
    assert.equal(instances.reduce((n, i) => n + (i.virtualIpaddresses?.length ?? 0) + (i.virtualIpaddressesExcluded?.length ?? 0), 0), c.vips);
    const vss = r.config.virtualServers ?? [];
    assert.equal(vss.length, c.virtualServers);
    assert.equal(vss.reduce((n, v) => n + v.realServers.length, 0), c.realServers);
    c.check?.(r);
  });

  test(`corpus ${c.file}: the output passes check-config`, () => {
    const r = importKeepalived(path.join(FIXTURES, c.file), { configId: 'lb1' });
    const loaded = loadConfigText(r.yaml, 'imported.yaml');
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.map(formatError).join('\n'));
  });

  test(`corpus ${c.file}: the YAML parses back and its comments point at real directives`, () => {
    const r = importKeepalived(path.join(FIXTURES, c.file), { configId: 'lb1' });
    assert.deepEqual(YAML.parse(r.yaml), JSON.parse(JSON.stringify(r.config)));
    const base = path.dirname(path.join(FIXTURES, c.file));
    const refs = [...r.yaml.matchAll(/# from (\S+):(\d+)$/gm)];
    assert.ok(refs.length > 0);
    for (const [, file, line] of refs) {
      const text = fs.readFileSync(path.resolve(base, file ?? ''), 'utf8').split('\n')[Number(line) - 1] ?? '';
      assert.match(text.trim(), /^[^\s!#]/, `${file ?? ''}:${line ?? ''} is not a directive: "${text}"`);
    }
  });
}
