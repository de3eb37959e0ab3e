// The importer accepts what keepalived 2.2.7 accepts (issue #16, item 5), on fixture files
// (test/fixtures/keepalived-robustness) that keepalived itself loads: a stray '}' is a warning with
// FILE:LINE, as keepalived logs it, and the import is complete (exit 0); a virtual server defined
// twice is merged the way keepalived programs IPVS from it and reported (exit 2); a UDP_CHECK without
// require_reply is a note, not a diagnostic (exit 0). Every output passes check-config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importKeepalived, importKeepalivedCommand, type ImportResult } from '../../daemon/config/keepalived/index.js';
import { formatError } from '../../daemon/config/errors.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { requireCommands } from '../support/prereq.js';
import { importText } from './keepalived-memfs.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/keepalived-robustness');

/** keepalived -t's messages for a fixture (it exits non-zero on warnings too). */
function keepalivedSays(file: string): string[] {
  requireCommands('keepalived');
  let out: string;
  try {
    out = execFileSync('keepalived', ['-t', '-n', '-l', '-f', path.join(FIXTURES, file)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    out = `${err.stdout ?? ''}${err.stderr ?? ''}`;
  }
  return [...new Set(out.split('\n').filter((l) => l.trim() !== ''))];
}

function passesCheckConfig(r: ImportResult): void {
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.map(formatError).join('\n'));
}

async function exitCode(file: string): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await importKeepalivedCommand([path.join(FIXTURES, file), '--config-id', 'lb1'], { stdout: () => undefined, stderr: (t) => { stderr += t; } });
  return { code, stderr };
}

test('a stray }: keepalived warns and goes on; so does the import, with the same FILE:LINE, and it is complete', async () => {
  // keepalived repeats it once per process that reads the file (and with or without the file name).
  const said = new Set(keepalivedSays('stray-brace.conf').map((l) => l.replace(/^.*Line (\d+)\) /, 'line $1: ')));
  assert.deepEqual([...said], ["line 6: Extra '}' found", "line 6: Unknown keyword '}'"]);
  const r = importKeepalived(path.join(FIXTURES, 'stray-brace.conf'), { configId: 'lb1' });
  assert.deepEqual(r.diagnostics, [{ file: path.join(FIXTURES, 'stray-brace.conf'), line: 6, directive: '}', why: "warning: extra '}' without a matching '{'; ignored, as keepalived does", warning: true }]);
  assert.equal(r.complete, true);
  assert.deepEqual(r.config.virtualServers?.[0]?.realServers.map((s) => [s.address, s.weight]), [['10.40.1.1', 2], ['10.40.1.2', 1]]);
  assert.match(r.yaml, /# Complete: every directive was carried over\.\n# Warnings \(nothing lost\):\n# {3}\/\S+\/stray-brace\.conf:6: }: warning/);
  passesCheckConfig(r);
  const cli = await exitCode('stray-brace.conf');
  assert.equal(cli.code, 0);
  assert.equal(cli.stderr, `${path.join(FIXTURES, 'stray-brace.conf')}:6: }: warning: extra '}' without a matching '{'; ignored, as keepalived does\n`);
});

test('a stray } in an included file is named by that file and line', () => {
  const r = importText('include extra.conf\nglobal_defs {\n router_id lb1\n}\n', { '/etc/keepalived/extra.conf': 'vrrp_script chk {\n script "/bin/true"\n}\n}\n' });
  assert.deepEqual(r.diagnostics.map((d) => [d.file, d.line, d.directive, d.warning]), [['/etc/keepalived/extra.conf', 4, '}', true]]);
  assert.equal(r.complete, true);
});

test('a virtual server defined twice: merged as keepalived programs IPVS from it (the first one\'s settings, the real servers of both), reported', async () => {
  // keepalived loads both blocks without a word.
  assert.deepEqual(keepalivedSays('duplicate-virtual-server.conf'), []);
  const r = importKeepalived(path.join(FIXTURES, 'duplicate-virtual-server.conf'), { configId: 'lb1' });
  const vss = r.config.virtualServers ?? [];
  assert.equal(vss.length, 1);
  const vs = vss[0];
  assert.equal(vs?.scheduler, 'rr', 'the first block\'s scheduler: the second "add service" fails in IPVS');
  // 10.50.1.2 is in both blocks: the first one's entry (weight 1) stays; 10.50.1.3 comes with its own
  // HTTP check and the second block's delay_loop (each checker keeps its block's timing).
  assert.deepEqual(vs.realServers.map((s) => [s.address, s.weight, s.healthCheck?.type ?? vs.healthCheck?.type, s.healthCheck?.interval ?? vs.healthCheck?.interval]), [
    ['10.50.1.1', 1, 'tcp', '5s'], ['10.50.1.2', 1, 'tcp', '5s'], ['10.50.1.3', 3, 'http', '10s'],
  ]);
  assert.deepEqual(r.diagnostics.map((d) => [d.line, d.directive]), [[27, 'virtual_server']]);
  assert.equal(r.diagnostics[0]?.why,
    `virtual server tcp:192.0.2.90:443 is defined again (first at ${path.join(FIXTURES, 'duplicate-virtual-server.conf')}:7); keepalived 2.2.7 keeps the first one's service settings and adds this block's real servers to it: merged into the first; ` +
    'real servers in both keep the first one\'s entry (10.50.1.2:443); this block\'s scheduler not carried over');
  passesCheckConfig(r);
  assert.equal((await exitCode('duplicate-virtual-server.conf')).code, 2);
});

test('duplicates: the same fwmark twice, and a virtual server with the same checks in both blocks, merge too', () => {
  const block = (w: number, rs: string) => `virtual_server fwmark 7 {\n lb_algo rr\n real_server ${rs} 80 {\n  weight ${w}\n  TCP_CHECK {\n   connect_timeout 2\n  }\n }\n}\n`;
  const r = importText(block(1, '10.0.1.1') + block(2, '10.0.1.2'));
  const vs = r.config.virtualServers?.[0];
  assert.equal(r.config.virtualServers?.length, 1);
  assert.deepEqual(vs?.realServers.map((s) => [s.address, s.weight]), [['10.0.1.1', 1], ['10.0.1.2', 2]]);
  assert.equal(vs.healthCheck?.type, 'tcp', 'identical checks are written once on the merged service again');
  assert.ok(vs.realServers.every((s) => s.healthCheck === undefined));
  assert.match(r.diagnostics[0]?.why ?? '', /^virtual server fwmark:4:7 is defined again/);
  passesCheckConfig(r);
  // Another protocol or port is another service: nothing merged.
  const other = importText(block(1, '10.0.1.1').replace('fwmark 7', '10.0.0.1 80') + block(1, '10.0.1.1').replace('fwmark 7', '10.0.0.1 80').replace('lb_algo rr', 'lb_algo rr\n protocol UDP'));
  assert.equal(other.config.virtualServers?.length, 2);
  assert.deepEqual(other.diagnostics.filter((d) => d.directive === 'virtual_server'), []);
});

test('UDP_CHECK without require_reply: the import is complete (exit 0); its note is in the YAML', () => {
  const r = importText('virtual_server 10.0.0.1 53 {\n protocol UDP\n real_server 10.0.1.1 53 {\n  UDP_CHECK {\n   connect_timeout 2\n  }\n }\n}\n');
  assert.equal(r.complete, true);
  assert.deepEqual(r.diagnostics, []);
  assert.match(r.yaml, /no require_reply: up unless an ICMP port-unreachable comes back, as in keepalived/);
  passesCheckConfig(r);
});

test('a quoted value with terminal escapes or a carriage return is printed escaped: it cannot erase the line that reports it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kesc-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const file = path.join(dir, 'keepalived.conf');
  // ESC [2K then CR erases the terminal line: the diagnostic would print as an empty line
  fs.writeFileSync(file, 'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 7\n priority "1\\x1b[2K\\r"\n virtual_ipaddress {\n  10.0.0.1/24\n }\n}\n');
  let stderr = '';
  let stdout = '';
  const code = await importKeepalivedCommand([file], { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  assert.equal(code, 2);
  const line = `${file}:4: priority: 1\\u001b[2K\\u000d is not an integer in 1..255; not carried over`;
  assert.equal(stderr.split('\n')[0], line);
  assert.ok(stdout.includes(`#   ${line}\n`), stdout);
  assert.ok(!/[\u001b\r]/.test(stderr + stdout));
  // a conditional line's id is raw text, listed in the YAML's header
  fs.writeFileSync(file, '@lb\x1b[2K global_defs {\n}\n');
  stdout = '';
  assert.equal(await importKeepalivedCommand([file], { stdout: (s) => (stdout += s), stderr: () => undefined }), 0);
  assert.match(stdout, /ids in the file: lb\\u001b\[2K\)/);
  assert.ok(!stdout.includes('\u001b'));
});
