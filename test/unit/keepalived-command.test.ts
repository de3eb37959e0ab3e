// `lvsd import-keepalived FILE`: YAML on stdout, one FILE:LINE: directive: why line per loss on stderr,
// exit 0 complete / 2 incomplete / 1 error. Plus a property test: no input makes the importer fail
// with anything but a positioned KeepalivedImportError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import YAML from 'yaml';
import { importKeepalived, importKeepalivedCommand, KeepalivedImportError } from '../../daemon/config/keepalived/index.js';
import { MAIN, memLoader } from './keepalived-memfs.js';

async function run(files: Record<string, string>, argv: (dir: string) => string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kcmd-'));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    let stdout = '';
    let stderr = '';
    const code = await importKeepalivedCommand(argv(dir), { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const COMPLETE = 'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 7\n virtual_ipaddress {\n  10.0.0.1/24\n }\n}\n';

test('complete import: exit 0, YAML on stdout, nothing on stderr', async () => {
  const r = await run({ 'keepalived.conf': COMPLETE }, (d) => [path.join(d, 'keepalived.conf')]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, '');
  assert.equal((YAML.parse(r.stdout) as { vrrp: { instances: { virtualRouterId: number }[] } }).vrrp.instances[0]?.virtualRouterId, 7);
});

test('incomplete import: exit 2, every loss as FILE:LINE: directive: why on stderr, the YAML still on stdout', async () => {
  const r = await run({ 'k.conf': `global_defs {\n smtp_server 10.0.0.9\n}\n${COMPLETE.replace(' interface eth0\n', ' interface eth0\n use_ipvlan\n')}` }, (d) => [path.join(d, 'k.conf')]);
  assert.equal(r.code, 2);
  const lines = r.stderr.trimEnd().split('\n');
  assert.match(lines[0] ?? '', /^\/\S+\/k\.conf:2: smtp_server: no notification_email: keepalived sends no mail, nor does lvsd/);
  assert.match(lines[1] ?? '', /^\/\S+\/k\.conf:6: use_ipvlan: an IPv4 instance on an ipvlan needs an address/);
  assert.match(lines[2] ?? '', /incomplete: 2 directive\(s\) not carried over/);
  assert.match(r.stdout, /virtualRouterId: 7/);
});

test('errors: exit 1 with the position; usage errors exit 1 with the usage', async () => {
  const bad = await run({ 'k.conf': 'vrrp_instance VI_1 {\n interface eth0\n' }, (d) => [path.join(d, 'k.conf')]);
  assert.equal(bad.code, 1);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /^lvsd import-keepalived: \/\S+\/k\.conf:1:20: block opened here is never closed/);
  const missing = await run({}, (d) => [path.join(d, 'nope.conf')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nope\.conf: cannot read: ENOENT/);
  const none = await run({}, () => []);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^usage: lvsd import-keepalived/);
  const unknown = await run({}, () => ['--frobnicate', 'x']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown option --frobnicate/);
  const help = await run({}, () => ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit status: 0 complete, 2 incomplete/);
});

test('--config-id picks the conditional lines of one director', async () => {
  const conf = COMPLETE.replace(' interface eth0\n', ' interface eth0\n@lb1 priority 150\n@lb2 priority 100\n');
  const lb1 = await run({ 'k.conf': conf }, (d) => ['--config-id', 'lb1', path.join(d, 'k.conf')]);
  const lb2 = await run({ 'k.conf': conf }, (d) => [`--config-id=lb2`, path.join(d, 'k.conf')]);
  assert.match(lb1.stdout, /priority: 150/);
  assert.match(lb2.stdout, /priority: 100/);
  assert.match(lb2.stdout, /Conditional lines kept for config id "lb2" \(ids in the file: lb1, lb2\)/);
});

// Text made of keepalived-ish pieces: keywords, braces, quotes, comments, addresses, newlines.
const piece = fc.constantFrom(
  'vrrp_instance', 'virtual_server', 'real_server', 'global_defs', 'vrrp_sync_group', 'virtual_server_group', 'group',
  'TCP_CHECK', 'HTTP_GET', 'url', 'path', 'virtual_ipaddress', 'interface', 'priority', 'weight', 'include', 'fwmark',
  '{', '}', '"', "'", '!', '#', '@lb1', '$X=1', '${X}', '10.0.0.1', '10.0.0.1-3', '80', '-1', '999999', 'eth0', 'VI_1', '\n', '\n', ' ',
);

test('property: any input either imports (and its YAML parses back) or fails with a positioned error', () => {
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 80 }), (parts) => {
      const text = parts.join(' ');
      try {
        const r = importKeepalived(MAIN, { configId: 'lb1', loader: memLoader({ [MAIN]: text }) });
        assert.deepEqual(YAML.parse(r.yaml) ?? {}, JSON.parse(JSON.stringify(r.config)));
        for (const d of r.diagnostics) assert.ok(d.line >= 1 && d.file !== '' && d.why !== '', JSON.stringify(d));
        assert.equal(r.complete, r.diagnostics.every((d) => d.warning === true));
      } catch (e) {
        if (!(e instanceof KeepalivedImportError)) throw e;
        assert.match(e.message, /^(keepalived\.conf|\/[^:]+):\d+:\d+: /);
      }
    }),
    { numRuns: 200 },
  );
});

// Well-formed blocks with a random mix of real directives and values (good and bad): the mapper
// must map or report each, never crash, and its YAML must parse back.
const instanceLine = fc.constantFrom(
  'state MASTER', 'state BOGUS', 'priority 150', 'priority 0', 'priority x', 'advert_int 0.5', 'advert_int -1', 'nopreempt', 'preempt_delay 3',
  'version 3', 'version 9', 'accept', 'no_accept', 'use_vmac', 'unicast_src_ip 10.0.0.1', 'unicast_src_ip nope',
  'unicast_peer {\n 10.0.0.2\n bad\n}', 'authentication {\n auth_type PASS\n auth_pass abcdefghij\n}', 'authentication {\n auth_type AH\n}',
  'track_interface {\n eth1 weight -10\n eth2 weight 999\n}', 'track_script {\n chk\n nope weight 2\n}', 'notify_master "/bin/x a b"',
  'garp_master_delay 2', 'virtual_ipaddress {\n 10.0.0.9/24 dev eth1 label eth1:v\n 2001:db8::1\n}', 'virtual_routes {\n}',
);
const rsLine = fc.constantFrom(
  'weight 3', 'weight -1', 'lvs_method DR', 'lvs_method TUN type gre', 'uthreshold 10', 'inhibit_on_failure', 'notify_up /bin/up',
  'TCP_CHECK {\n connect_port 81\n}', 'HTTP_GET {\n url {\n  path /h\n  status_code 200-299\n }\n}', 'MISC_CHECK {\n misc_path /bin/true\n}',
  'DNS_CHECK {\n type AAAA\n}', 'UDP_CHECK {\n require_reply 0x\n}', 'PING_CHECK {\n}', 'SSL_GET {\n enable_sni\n}', 'delay_loop 2', 'retry x',
);
const vsLine = fc.constantFrom('lvs_sched rr', 'lb_algo nope', 'lb_kind NAT', 'protocol UDP', 'protocol XTP', 'persistence_timeout', 'quorum 2', 'sorry_server 10.0.9.9 80', 'ops', 'alpha', 'sh-port', 'delay_loop 3', 'connect_timeout 1.5');

test('property: random well-formed configs map or report every directive, and round-trip through YAML', () => {
  fc.assert(
    fc.property(fc.array(instanceLine, { maxLength: 12 }), fc.array(vsLine, { maxLength: 8 }), fc.array(fc.array(rsLine, { maxLength: 6 }), { maxLength: 4 }), (inst, vs, rss) => {
      const text =
        'vrrp_script chk {\n script /bin/true\n}\n' +
        `vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 9\n virtual_ipaddress {\n  10.0.0.1/24\n }\n${inst.join('\n')}\n}\n` +
        `virtual_server 10.0.0.1 80 {\n${vs.join('\n')}\n${rss.map((rs, i) => `real_server 10.0.1.${i + 1} 80 {\n${rs.join('\n')}\n}`).join('\n')}\n}\n`;
      const r = importKeepalived(MAIN, { configId: 'lb1', loader: memLoader({ [MAIN]: text }) });
      assert.deepEqual(YAML.parse(r.yaml), JSON.parse(JSON.stringify(r.config)));
      assert.equal(r.config.vrrp?.instances?.length, 1);
      assert.equal(r.config.virtualServers?.[0]?.realServers.length, rss.length);
      const lines = text.split('\n');
      for (const d of r.diagnostics) assert.ok((lines[d.line - 1] ?? '').includes(d.directive.replace(/^"|"$/g, '')), `${d.line}: ${d.directive}`);
    }),
    { numRuns: 150 },
  );
});
