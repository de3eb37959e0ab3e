// splitIPv4: the one IPv4 header splitter (the VRRP socket and the packet codec both use it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitIPv4 } from '../../daemon/net/ipv4-header.js';

function datagram(payload: Buffer, o: { ihlWords?: number; total?: number; version?: number } = {}): Buffer {
  const ihl = (o.ihlWords ?? 5) * 4;
  const b = Buffer.alloc(ihl + payload.length);
  b[0] = ((o.version ?? 4) << 4) | (o.ihlWords ?? 5);
  b.writeUInt16BE(o.total ?? b.length, 2);
  b[8] = 255;
  b[9] = 112;
  Buffer.from([192, 0, 2, 1]).copy(b, 12);
  Buffer.from([224, 0, 0, 18]).copy(b, 16);
  payload.copy(b, ihl);
  return b;
}

test('splitIPv4: header fields and payload, options skipped, padding past the total length cut, views not copies', () => {
  const payload = Buffer.from('vrrp-advert');
  const s = splitIPv4(datagram(payload));
  assert.ok(s.ok);
  assert.deepEqual([s.parts.ttl, s.parts.protocol, [...s.parts.src], [...s.parts.dst], s.parts.payload.toString()], [255, 112, [192, 0, 2, 1], [224, 0, 0, 18], 'vrrp-advert']);
  const withOptions = splitIPv4(datagram(payload, { ihlWords: 6 }));
  assert.ok(withOptions.ok);
  assert.equal(withOptions.parts.payload.toString(), 'vrrp-advert');
  const padded = datagram(Buffer.concat([payload, Buffer.alloc(9)]), { total: 20 + payload.length });
  const cut = splitIPv4(padded);
  assert.ok(cut.ok);
  assert.equal(cut.parts.payload.toString(), 'vrrp-advert');
  assert.equal(cut.parts.payload.buffer, padded.buffer, 'a view into the datagram');
});

test('splitIPv4: too short, a bad header length, not version 4', () => {
  assert.deepEqual(splitIPv4(Buffer.alloc(19)), { ok: false, why: 'too-short', detail: 'IPv4 packet of 19 bytes' });
  assert.equal(splitIPv4(datagram(Buffer.alloc(0), { ihlWords: 4 })).ok, false);
  const long = datagram(Buffer.alloc(0));
  long[0] = 0x4f; // ihl 60 bytes in a 20-byte datagram
  assert.deepEqual(splitIPv4(long), { ok: false, why: 'length', detail: 'bad IPv4 header (ihl 60)' });
  assert.equal(splitIPv4(datagram(Buffer.alloc(4), { version: 6 })).ok, false);
});
