// DNS_CHECK: ask the real server one question and expect an rcode and, optionally, an answer. Over
// UDP by default; over TCP (`protocol: tcp`) each message carries its 2-byte length first (RFC 1035
// 4.2.2, RFC 7766 §8). A truncated UDP answer (TC) is asked again over TCP, as a resolver would,
// unless `tcpOnTruncation: false`, in which case it is judged as it came.
import { randomInt } from 'node:crypto';
import { fail, OK_VERDICT, type CheckVerdict } from '../types.js';
import type { DnsCheckOptions, Endpoint } from '../options.js';
import { decodeResponse, encodeQuery, QTYPES, RCODE_NAMES, rcodeName, typeName, type DnsResponse } from './dns-codec.js';
import { udpExchange } from './datagram.js';
import type { Probe } from './probe.js';
import { tcpExchange } from './stream.js';

/** A DNS message over TCP is at most 65,535 bytes, plus its length. */
const MAX_TCP_MESSAGE = 2 + 0xffff;

/** The 2-byte length prefix of DNS over TCP. */
export function frameTcp(msg: Buffer): Buffer {
  const out = Buffer.alloc(2 + msg.length);
  out.writeUInt16BE(msg.length, 0);
  msg.copy(out, 2);
  return out;
}

/** The first whole message of a TCP stream, or null while it is still arriving. */
export function unframeTcp(received: Buffer): Buffer | null {
  if (received.length < 2) return null;
  const len = received.readUInt16BE(0);
  return received.length < 2 + len ? null : received.subarray(2, 2 + len);
}

export function dnsProbe(ep: Endpoint, o: DnsCheckOptions, timeoutMs: number): Probe {
  const qtype = QTYPES[(o.type ?? 'A').toUpperCase()];
  if (qtype === undefined) throw new Error(`type: unknown query type ${JSON.stringify(o.type)} (${Object.keys(QTYPES).join(' ')})`);
  const wantRcode = RCODE_NAMES.indexOf(o.expectRcode ?? 'NOERROR');
  if (wantRcode < 0) throw new Error(`expectRcode: unknown rcode ${JSON.stringify(o.expectRcode)}`);
  const protocol = o.protocol ?? 'udp';
  const retryTcp = protocol === 'udp' && o.tcpOnTruncation !== false;
  encodeQuery(0, o.name, qtype); // validates the name now, not at the first check
  const wantAnswer = o.expectAnswer?.toLowerCase().replace(/\.$/, '');
  const timedOut = fail('timeout', `no DNS reply in ${timeoutMs} ms`);
  const tcpTimedOut = fail('timeout', `no DNS reply over TCP in ${timeoutMs} ms`);

  const verdict = (r: DnsResponse, via: string): CheckVerdict => {
    if (r.rcode !== wantRcode) return fail('rcode', `rcode ${rcodeName(r.rcode)}${via}`);
    if (wantAnswer === undefined) return OK_VERDICT;
    for (const a of r.answers) if (a.data.toLowerCase().replace(/\.$/, '') === wantAnswer) return OK_VERDICT;
    const got = r.answers.map((a) => `${typeName(a.type)} ${a.data}`).join(', ');
    return fail('answer-mismatch', `no answer ${o.expectAnswer ?? ''} (got ${got === '' ? 'none' : got})${via}`);
  };
  /** Judges one message: a verdict, 'truncated' (ask over TCP), or null (not our answer). */
  const judge = (msg: Buffer, id: number, via: string, tcOk: boolean): CheckVerdict | 'truncated' | null => {
    let r;
    try {
      r = decodeResponse(msg);
    } catch (e) {
      // A truncated UDP answer may be cut mid-record: that is what TC says, not garbage.
      if (!tcOk && msg.length >= 4 && (msg.readUInt16BE(2) & 0x0200) !== 0 && msg.readUInt16BE(0) === id) return 'truncated';
      return fail('protocol', `${(e as Error).message}${via}`);
    }
    if (r.id !== id || !r.qr) return null;
    if (r.tc && !tcOk) return 'truncated';
    return verdict(r, via);
  };

  const overTcp = (id: number, signal: AbortSignal, via: string): Promise<CheckVerdict> =>
    tcpExchange(ep, {
      payload: frameTcp(encodeQuery(id, o.name, qtype)),
      judge: (received, ended) => {
        const msg = unframeTcp(received);
        if (msg === null) return ended ? fail('reset', `connection closed before a whole DNS message${via}`) : null;
        const v = judge(msg, id, via, true);
        return v === null || v === 'truncated' ? fail('protocol', `answer with another id or not a response${via}`) : v;
      },
      maxBytes: MAX_TCP_MESSAGE,
      tooLong: fail('protocol', `answer longer than ${MAX_TCP_MESSAGE} bytes${via}`), // unreachable: a length prefix says at most this
      timedOut: tcpTimedOut,
    }, signal);

  if (protocol === 'tcp') return (signal) => overTcp(randomInt(0x10000), signal, ' (tcp)');
  return async (signal) => {
    const id = randomInt(0x10000);
    const seen = { truncated: false };
    const v = await udpExchange(ep, {
      payload: encodeQuery(id, o.name, qtype),
      judge: (msg) => {
        const j = judge(msg, id, '', !retryTcp);
        if (j !== 'truncated') return j;
        seen.truncated = true;
        return OK_VERDICT; // settles the UDP exchange; the TCP answer decides
      },
      timedOut,
    }, signal);
    if (!seen.truncated) return v;
    if (signal.aborted) return timedOut;
    return overTcp(randomInt(0x10000), signal, ' (tcp after a truncated udp answer)');
  };
}
