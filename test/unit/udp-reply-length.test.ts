// UDP_CHECK reply bounds and keepalived's reply comparison: the checker's length decision, the config's
// minReplyLength/maxReplyLength (validated, handed to the checker), and the importer writing keepalived's
// check_udp_reply (first min(reply, require_reply) bytes, X nibbles, lengths 0..255 by default) faithfully.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { replyLengthFault, udpProbe } from '../../daemon/health/checkers/udp.js';
import { keepalivedReplyRegex } from '../../daemon/config/keepalived/udp-reply.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthPlan } from '../../daemon/director/plan.js';
import { diag, importText } from './keepalived-memfs.js';

test('replyLengthFault: both bounds inclusive, each named when crossed', () => {
  assert.equal(replyLengthFault(0), undefined);
  assert.equal(replyLengthFault(4, 4, 4), undefined);
  assert.match(replyLengthFault(3, 4, 10) ?? '', /3 bytes, shorter than minReplyLength 4/);
  assert.match(replyLengthFault(11, 4, 10) ?? '', /11 bytes, longer than maxReplyLength 10/);
});

test('udp probe: a reply outside the bounds fails before its bytes are compared', async (t) => {
  const s = createSocket('udp4');
  s.on('message', (m, from) => {
    s.send(Buffer.concat([m, m]), from.port, from.address); // echoes twice over
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  t.after(() => s.close());
  const ep = { host: '127.0.0.1', port: s.address().port, family: 4 as const };
  const run = (min?: number, max?: number) =>
    udpProbe(ep, { payload: 'abcd', expect: { regex: '^\\xab' }, minReplyLength: min, maxReplyLength: max }, 1000)(new AbortController().signal);
  assert.equal((await run()).reason, 'ok');
  assert.equal((await run(4, 4)).reason, 'ok');
  const long = await run(0, 3);
  assert.equal(long.reason, 'answer-mismatch');
  assert.match(long.detail, /4 bytes, longer than maxReplyLength 3/);
  assert.equal((await run(5)).reason, 'answer-mismatch');
});

const CFG = (udp: string) => `virtualServers:
  - address: 192.0.2.10
    port: 53
    protocol: udp
    healthCheck: { type: udp, udp: ${udp} }
    realServers: [{ address: 10.0.1.11 }]
`;

test('config: reply bounds reach the checker; min > max and bounds without expect are errors at the field', () => {
  const ok = loadConfigText(CFG("{ expect: '0a0b', minReplyLength: 2, maxReplyLength: 64 }"));
  if (!ok.ok) assert.fail(ok.errors.map(formatError).join('\n'));
  const u = healthPlan(ok.config).targets[0]?.check.udp;
  assert.ok(u);
  assert.equal(u.minReplyLength, 2);
  assert.equal(u.maxReplyLength, 64);
  const crossed = loadConfigText(CFG("{ expect: '0a0b', minReplyLength: 9, maxReplyLength: 8 }"));
  assert.ok(!crossed.ok);
  assert.match(crossed.errors.map(formatError).join('\n'), /healthCheck\.udp\.minReplyLength.*9 > maxReplyLength 8/);
  const bare = loadConfigText(CFG('{ maxReplyLength: 8 }'));
  assert.ok(!bare.ok);
  assert.match(bare.errors.map(formatError).join('\n'), /udp\.maxReplyLength.*need udp\.expect/);
});

/** keepalived's check_udp_reply (check_udp.c), bytes only: the reference the importer's regex must equal. */
function keepalivedCompare(reply: Buffer, hex: string): boolean {
  const n = Math.min(reply.length, hex.length / 2);
  for (let i = 0; i < n; i++) {
    const pair = hex.slice(2 * i, 2 * i + 2);
    const mask = (pair[0] === 'x' ? 0xf0 : 0) | (pair[1] === 'x' ? 0x0f : 0);
    const want = parseInt(pair.replace(/x/g, '0'), 16);
    if (((reply[i] ?? 0) ^ want) & ~mask & 0xff) return false;
  }
  return true;
}

test('keepalivedReplyRegex agrees with keepalived\'s comparison on random bytes, wildcards and lengths', () => {
  let seed = 0x2545f491;
  const rnd = (n: number): number => {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const digits = '0123456789abcdefx';
  let passes = 0;
  for (let k = 0; k < 5000; k++) {
    let hex = '';
    for (let i = 0, n = 1 + rnd(6); i < 2 * n; i++) hex += digits.charAt(rnd(rnd(4) === 0 ? 17 : 16));
    const re = new RegExp(keepalivedReplyRegex(hex));
    // Replies near the expected bytes (so that both outcomes occur), of every length around them.
    const base = Buffer.from(hex.replace(/x/g, () => digits[rnd(16)] ?? '0'), 'hex');
    const reply = Buffer.alloc(rnd(base.length + 3));
    for (let i = 0; i < reply.length; i++) reply[i] = i < base.length && rnd(4) !== 0 ? (base[i] ?? 0) : rnd(256);
    const want = keepalivedCompare(reply, hex);
    assert.equal(re.test(reply.toString('latin1')), want, `require_reply ${hex}, reply ${reply.toString('hex')}`);
    if (want) passes++;
  }
  assert.ok(passes > 500 && passes < 4500, `both outcomes exercised (${passes} passes of 5000)`);
});

const UDP = (body: string) => `virtual_server 10.0.0.100 53 {\n protocol UDP\n real_server 10.0.1.1 53 {\n  UDP_CHECK {\n${body}\n  }\n }\n}\n`;

test('import: require_reply bytes keep keepalived\'s comparison and its 0..255 bounds', () => {
  const r = importText(UDP('   require_reply 0a0b'));
  assert.deepEqual(diag(r), []);
  const udp = r.config.virtualServers?.[0]?.healthCheck?.udp;
  assert.deepEqual(udp, { expect: `/${keepalivedReplyRegex('0a0b')}/`, maxReplyLength: 255 });
  assert.match(r.yaml, /keepalived compares the first min\(reply, 2\) bytes.*0\.\.255 \(keepalived's default maximum\)/);
  const loaded = loadConfigText(r.yaml);
  if (!loaded.ok) assert.fail(loaded.errors.map(formatError).join('\n'));
  const check = healthPlan(loaded.config).targets[0]?.check.udp;
  assert.ok(check);
  assert.equal(check.maxReplyLength, 255);
  const expect = check.expect;
  assert.ok(expect !== undefined && 'regex' in expect);
  const re = new RegExp(expect.regex);
  for (const [hex, pass] of [['0a0b', true], ['0a', true], ['', true], ['0a0b0c', true], ['0a0c', false], ['0b', false]] as const)
    assert.equal(re.test(Buffer.from(hex, 'hex').toString('latin1')), pass, hex);
});

test('import: equal bounds at the byte count is an exact reply; wildcards and crossed bounds', () => {
  const exact = importText(UDP('   require_reply 0a0b\n   min_reply_length 2\n   max_reply_length 2'));
  assert.deepEqual(exact.config.virtualServers?.[0]?.healthCheck?.udp, { expect: '0a0b' });
  const wild = importText(UDP('   require_reply 0aXb\n   min_reply_length 1\n   max_reply_length 100'));
  assert.deepEqual(diag(wild), [], 'X nibbles are carried over now');
  assert.deepEqual(wild.config.virtualServers?.[0]?.healthCheck?.udp, { expect: `/${keepalivedReplyRegex('0axb')}/`, minReplyLength: 1, maxReplyLength: 100 });
  const crossed = importText(UDP('   require_reply 0a\n   min_reply_length 9\n   max_reply_length 8'));
  assert.match(crossed.diagnostics.map((d) => `${d.line} ${d.why}`).join('\n'), /min_reply_length 9 > max_reply_length 8/);
  const bad = importText(UDP('   require_reply 0a\n   max_reply_length 70000'));
  assert.match(bad.diagnostics.map((d) => `${d.line} ${d.why}`).join('\n'), /70000 is not an integer in 0\.\.65535/);
});

test('import: bounds without require_reply bytes are a note (keepalived ignores them), not a diagnostic', () => {
  const r = importText(UDP('   require_reply\n   max_reply_length 8'));
  assert.deepEqual(diag(r), []);
  assert.equal(r.config.virtualServers?.[0]?.healthCheck?.udp?.maxReplyLength, undefined);
  assert.match(r.yaml, /max_reply_length at .*keepalived checks reply lengths only against require_reply bytes/);
});
