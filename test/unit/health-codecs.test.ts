// The pure parts of the checkers: the HTTP response reader, status ranges, the DNS codec, error mapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HttpResponseReader, parseStatusRanges, statusAccepted } from '../../daemon/health/checkers/http-response.js';
import { DnsCodecError, decodeResponse, encodeQuery, readName } from '../../daemon/health/checkers/dns-codec.js';
import { verdictFromError } from '../../daemon/health/checkers/errors.js';

const responses: { name: string; raw: string; needBody: boolean; closed: boolean; state: string; status?: number; body?: string }[] = [
  { name: 'content-length body', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n', needBody: true, closed: false, state: 'complete', status: 200, body: 'ok\n' },
  { name: 'head only when the body does not matter', raw: 'HTTP/1.1 503 Busy\r\nContent-Length: 999\r\n\r\n', needBody: false, closed: false, state: 'complete', status: 503 },
  { name: 'chunked body with extension', raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nok\r\n3\r\n!!!\r\n0\r\n\r\n', needBody: true, closed: false, state: 'complete', status: 200, body: 'ok!!!' },
  { name: 'body until close', raw: 'HTTP/1.0 200 OK\r\n\r\nhello', needBody: true, closed: true, state: 'complete', status: 200, body: 'hello' },
  { name: '204 has no body', raw: 'HTTP/1.1 204 No Content\r\n\r\n', needBody: true, closed: false, state: 'complete', status: 204, body: '' },
  { name: 'truncated content-length body', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', needBody: true, closed: true, state: 'bad', status: 200 },
  { name: 'not HTTP', raw: 'SSH-2.0-OpenSSH_9.2\r\n\r\n', needBody: false, closed: false, state: 'bad' },
  { name: 'closed before anything', raw: '', needBody: false, closed: true, state: 'bad' },
  { name: 'bad chunk size', raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', needBody: true, closed: false, state: 'bad', status: 200 },
];

for (const r of responses) {
  test(`http reader: ${r.name}, at every split point`, () => {
    const bytes = Buffer.from(r.raw, 'latin1');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new HttpResponseReader(r.needBody);
      reader.push(bytes.subarray(0, cut));
      reader.push(bytes.subarray(cut));
      if (r.closed) reader.end();
      assert.equal(reader.state, r.state, `cut at ${cut}: ${reader.problem}`);
      if (r.status !== undefined) assert.equal(reader.status, r.status);
      if (r.body !== undefined) assert.equal(reader.body.toString('latin1'), r.body);
    }
  });
}

test('status ranges: numbers, strings and ranges; bad ones are named', () => {
  const ranges = parseStatusRanges([200, '301', '400-404']);
  assert.deepEqual(ranges, [[200, 200], [301, 301], [400, 404]]);
  assert.equal(statusAccepted(403, ranges), true);
  assert.equal(statusAccepted(503, ranges), false);
  assert.throws(() => parseStatusRanges(['2xx']), /bad status "2xx"/);
  assert.throws(() => parseStatusRanges(['299-200']), /bad status range/);
});

// A reply for www.example.com A with a compressed answer name, a CNAME and an A record.
function reply(id: number, rcode: number): Buffer {
  const q = encodeQuery(id, 'www.example.com', 1);
  const hdr = Buffer.from(q.subarray(0, 12));
  hdr.writeUInt16BE(0x8180 | rcode, 2);
  hdr.writeUInt16BE(2, 6);
  const question = q.subarray(12);
  const cname = Buffer.concat([
    Buffer.from([0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 6]),
    Buffer.from([3, 0x77, 0x65, 0x62, 0xc0, 16]), // "web" + pointer to "example.com"
  ]);
  const a = Buffer.from([0xc0, 12 + question.length + 12, 0, 1, 0, 1, 0, 0, 1, 0, 0, 4, 192, 0, 2, 1]);
  return Buffer.concat([hdr, question, cname, a]);
}

test('dns: a query has the header, the name and the type that were asked', () => {
  const q = encodeQuery(0xbeef, 'example.com.', 28);
  assert.equal(q.toString('hex'), 'beef01000001000000000000076578616d706c6503636f6d00001c0001');
  assert.throws(() => encodeQuery(1, `${'a'.repeat(64)}.com`, 1), /1\.\.63 bytes/);
});

test('dns: a reply with compressed names decodes to presentation form', () => {
  const r = decodeResponse(reply(7, 0));
  assert.equal(r.id, 7);
  assert.equal(r.qr, true);
  assert.equal(r.rcode, 0);
  assert.deepEqual(r.questions, [{ name: 'www.example.com', type: 1 }]);
  assert.deepEqual(r.answers.map((a) => [a.name, a.type, a.data]), [
    ['www.example.com', 5, 'web.example.com'],
    ['web.example.com', 1, '192.0.2.1'],
  ]);
  assert.equal(decodeResponse(reply(7, 3)).rcode, 3);
});

test('dns: a compression loop and a truncated message are errors with an offset', () => {
  const loop = Buffer.from([0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12]);
  assert.throws(() => decodeResponse(loop), (e: unknown) => e instanceof DnsCodecError && /loop/.test(e.message));
  assert.throws(() => decodeResponse(reply(1, 0).subarray(0, 40)), DnsCodecError);
});

test('dns: property — names round-trip and garbage only ever raises DnsCodecError', () => {
  const label = fc.stringMatching(/^[a-z0-9-]{1,20}$/);
  fc.assert(
    fc.property(fc.array(label, { minLength: 1, maxLength: 6 }), (labels) => {
      const name = labels.join('.');
      assert.equal(readName(encodeQuery(1, name, 1), 12)[0], name);
    }),
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      try {
        decodeResponse(Buffer.from(bytes));
      } catch (e) {
        assert.ok(e instanceof DnsCodecError, String(e));
      }
    }),
  );
});

test('socket and TLS errors map to reasons', () => {
  assert.deepEqual(verdictFromError({ code: 'ECONNREFUSED', message: 'x' }), { ok: false, reason: 'refused', detail: 'ECONNREFUSED' });
  assert.equal(verdictFromError({ code: 'EHOSTUNREACH' }).reason, 'unreachable');
  assert.equal(verdictFromError({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }).reason, 'tls');
  assert.equal(verdictFromError({ code: 'ERR_SSL_WRONG_VERSION_NUMBER' }).reason, 'tls');
  assert.equal(verdictFromError({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }).reason, 'tls');
  assert.equal(verdictFromError(new Error('boom')).reason, 'error');
});
