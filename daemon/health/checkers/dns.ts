// DNS_CHECK: ask the real server one question over UDP and expect an rcode and, optionally, an answer.
import { randomInt } from 'node:crypto';
import { fail, OK_VERDICT, type CheckVerdict } from '../types.js';
import type { DnsCheckOptions, Endpoint } from '../options.js';
import { decodeResponse, encodeQuery, QTYPES, RCODE_NAMES, rcodeName, typeName } from './dns-codec.js';
import { udpExchange } from './datagram.js';
import type { Probe } from './probe.js';

export function dnsProbe(ep: Endpoint, o: DnsCheckOptions, timeoutMs: number): Probe {
  const qtype = QTYPES[(o.type ?? 'A').toUpperCase()];
  if (qtype === undefined) throw new Error(`type: unknown query type ${JSON.stringify(o.type)} (${Object.keys(QTYPES).join(' ')})`);
  const wantRcode = RCODE_NAMES.indexOf(o.expectRcode ?? 'NOERROR');
  if (wantRcode < 0) throw new Error(`expectRcode: unknown rcode ${JSON.stringify(o.expectRcode)}`);
  encodeQuery(0, o.name, qtype); // validates the name now, not at the first check
  const wantAnswer = o.expectAnswer?.toLowerCase().replace(/\.$/, '');
  const timedOut = fail('timeout', `no DNS reply in ${timeoutMs} ms`);
  return (signal) => {
    const id = randomInt(0x10000);
    const judge = (msg: Buffer): CheckVerdict | null => {
      let r;
      try {
        r = decodeResponse(msg);
      } catch (e) {
        return fail('protocol', (e as Error).message);
      }
      if (r.id !== id || !r.qr) return null; // a stray datagram: keep waiting
      if (r.rcode !== wantRcode) return fail('rcode', `rcode ${rcodeName(r.rcode)}`);
      if (wantAnswer === undefined) return OK_VERDICT;
      for (const a of r.answers) if (a.data.toLowerCase().replace(/\.$/, '') === wantAnswer) return OK_VERDICT;
      const got = r.answers.map((a) => `${typeName(a.type)} ${a.data}`).join(', ');
      return fail('answer-mismatch', `no answer ${o.expectAnswer ?? ''} (got ${got === '' ? 'none' : got})`);
    };
    return udpExchange(ep, { payload: encodeQuery(id, o.name, qtype), judge, timedOut }, signal);
  };
}
