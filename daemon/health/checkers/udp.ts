// UDP_CHECK: send a payload and expect a reply (exact bytes or a regex), or, when no reply is
// required, pass unless an ICMP port-unreachable comes back.
import { fail, OK_VERDICT } from '../types.js';
import type { Endpoint, UdpCheckOptions } from '../options.js';
import { udpExchange } from './datagram.js';
import type { Probe } from './probe.js';

function hex(field: string, s: string): Buffer {
  const clean = s.replace(/^0x/i, '').replace(/[\s:]/g, '');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(clean)) throw new Error(`${field}: not hex bytes: ${JSON.stringify(s)}`);
  return Buffer.from(clean, 'hex');
}

/** Why a reply of `len` bytes is out of bounds, or undefined when it is within them (both ends inclusive, as keepalived). */
export function replyLengthFault(len: number, min = 0, max = Infinity): string | undefined {
  if (len < min) return `reply of ${len} bytes, shorter than minReplyLength ${min}`;
  if (len > max) return `reply of ${len} bytes, longer than maxReplyLength ${max}`;
  return undefined;
}

export function udpProbe(ep: Endpoint, o: UdpCheckOptions, timeoutMs: number): Probe {
  const payload = hex('payload', o.payload ?? '');
  const expect = o.expect;
  let match: (b: Buffer) => boolean = () => true;
  let wanted = 'any reply';
  if (expect !== undefined && 'hex' in expect) {
    const bytes = hex('expect.hex', expect.hex);
    match = (b) => b.equals(bytes);
    wanted = `reply ${bytes.toString('hex')}`;
  } else if (expect !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(expect.regex);
    } catch (e) {
      throw new Error(`expect.regex: ${(e as Error).message}`);
    }
    match = (b) => re.test(b.toString('latin1'));
    wanted = `reply matching /${re.source}/`;
  }
  const requireReply = o.requireReply ?? expect !== undefined;
  const quietMs = o.quietMs ?? Math.min(Math.floor(timeoutMs / 2), 500);
  const exchange = {
    payload,
    judge: (msg: Buffer) => {
      const lengthFault = replyLengthFault(msg.length, o.minReplyLength, o.maxReplyLength);
      if (lengthFault !== undefined) return fail('answer-mismatch', lengthFault);
      return match(msg) ? OK_VERDICT : fail(expect !== undefined && 'regex' in expect ? 'regex-mismatch' : 'answer-mismatch', `got ${msg.subarray(0, 32).toString('hex')}, want ${wanted}`);
    },
    ...(requireReply ? {} : { quiet: { ms: quietMs, verdict: OK_VERDICT } }),
    timedOut: fail('timeout', `no reply in ${timeoutMs} ms`),
  };
  return (signal) => udpExchange(ep, exchange, signal);
}
