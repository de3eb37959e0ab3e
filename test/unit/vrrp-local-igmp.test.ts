// disableLocalIgmp's switch (vrrp/local-igmp.ts) on a fake /proc file: keepalived 2.2.7's behaviour as
// measured (1 → 0 at start, back to 1 on stop, a 0 set by hand left alone), and a file it cannot touch is
// a warning, not a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalIgmpReports } from '../../daemon/vrrp/local-igmp.js';

function file(initial: string): { value: string; writes: string[]; io: { read(): string; write(v: string): void } } {
  const f = { value: initial, writes: [] as string[], io: { read: () => `${f.value}\n`, write: (v: string) => { f.writes.push(v); f.value = v; } } };
  return f;
}

test('on: 1 → 0; off again (a stop, or a reload without it): back to 1; asked twice, written once', () => {
  const f = file('1');
  const s = new LocalIgmpReports(f.io, () => assert.fail('no warning expected'));
  s.want(true);
  s.want(true);
  assert.equal(f.value, '0');
  s.want(false);
  s.want(false);
  assert.equal(f.value, '1');
  assert.deepEqual(f.writes, ['0', '1']);
});

test('a 0 lvsd did not set is left at 0; not wanted, nothing is written', () => {
  const f = file('0');
  const s = new LocalIgmpReports(f.io, () => assert.fail('no warning expected'));
  s.want(true);
  s.want(false);
  assert.deepEqual(f.writes, []);
  const g = file('1');
  new LocalIgmpReports(g.io, () => undefined).want(false);
  assert.deepEqual(g.writes, []);
});

test('a file that cannot be read or written: one warning naming it, nothing thrown', () => {
  const warnings: string[] = [];
  const s = new LocalIgmpReports({ read: () => { throw new Error('EACCES: permission denied'); }, write: () => undefined }, (m) => warnings.push(m));
  s.want(true);
  assert.deepEqual(warnings, ['disableLocalIgmp: /proc/sys/net/ipv4/igmp_link_local_mcast_reports: EACCES: permission denied']);
});
