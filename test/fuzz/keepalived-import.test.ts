// Fuzzing the keepalived.conf importer (issue 17): mutated real keepalived.conf files and soups of
// keepalived's words and punctuation. The importer either imports (and what it prints loads without a
// throw) or refuses with a KeepalivedImportError naming FILE:LINE:COL — never any other error.
// Settings (N, time bound, seed): test/support/fuzz-text.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkKeepalived } from '../support/fuzz-checks.js';
import { mutatedArb, runFuzz, soupArb } from '../support/fuzz-text.js';

const DIR = fileURLToPath(new URL('../../../test/fixtures/keepalived/', import.meta.url));
const BASES = readdirSync(DIR).filter((f) => f.endsWith('.conf')).map((f) => readFileSync(`${DIR}${f}`, 'utf8'));

const KEEPALIVED_SPECIALS = [
  '{', '}', '{\n', '}\n', '!', '# ', '"', "'", '\\\n', '\n', ' ', '\t', 'include ', 'include *.conf', '@lb1 ', '@^lb1 ', '$VIP=10.0.0.1\n', '$VIP', '${VIP}',
  '~SEQ(i,1,3) ', '$i', 'vrrp_instance VI_1 {', 'virtual_server 10.0.0.1 80 {', 'real_server 10.0.1.1 80 {', 'virtual_server fwmark 1 {', 'virtual_server group G {',
  'state MASTER', 'state BACKUP', 'interface eth0', 'virtual_router_id 51', 'virtual_router_id 256', 'priority 0', 'priority 255', 'advert_int 0.001',
  'authentication {', 'auth_type PASS', 'auth_type AH', 'auth_pass 12345678901', 'virtual_ipaddress {', '10.0.0.1/33', '2001:db8::1/64', 'dev eth1', 'label eth0:1',
  'lb_algo wrr', 'lb_algo nope', 'lb_kind NAT', 'lb_kind DR', 'lb_kind TUN', 'persistence_timeout 50', 'protocol TCP', 'protocol SCTP', 'weight -1', 'weight 65536',
  'TCP_CHECK {', 'HTTP_GET {', 'SSL_GET {', 'MISC_CHECK {', 'DNS_CHECK {', 'url {', 'path /', 'status_code 200', 'digest abc', 'connect_timeout 3', 'delay_loop 0',
  'track_script {', 'vrrp_script chk {', 'script "/bin/true"', 'global_defs {', 'router_id lb1', 'notify_master "/x"', 'unicast_peer {', 'vrrp_sync_group G {',
  'group {', 'sorry_server 10.0.0.9 80', 'inhibit_on_failure', 'nopreempt', 'use_vmac', 'version 3', 'native_ipv6', '0', '-1', '99999999999999999999', '1.2.3.4',
];

test('fuzz: mutated keepalived.conf files import or are refused with a place, never a crash', () => {
  const r = runFuzz('keepalived mutated', mutatedArb(BASES, KEEPALIVED_SPECIALS), checkKeepalived);
  assert.ok(r.runs > 0);
});

test('fuzz: soups of keepalived words import or are refused with a place, never a crash', () => {
  const r = runFuzz('keepalived soup', soupArb(KEEPALIVED_SPECIALS, 80), checkKeepalived);
  assert.ok(r.runs > 0);
});
