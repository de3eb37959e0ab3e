// One TCP exchange: connect, send a request (maybe none), then judge the bytes received so far on
// every chunk and at the peer's end of stream, until a verdict settles the check. The stream
// counterpart of datagram.ts, shared by the agent and DNS-over-TCP checks. Answers are small: the
// exchange refuses to buffer more than `maxBytes`.
import { connect } from 'node:net';
import { fail, type CheckVerdict } from '../types.js';
import type { Endpoint } from '../options.js';
import { verdictFromError } from './errors.js';
import { settleOnce } from './probe.js';

export interface StreamExchange {
  /** Bytes written once connected; empty = only listen (the agent speaks first). */
  payload: Buffer;
  /** Judges what arrived so far: a verdict settles the check, null waits for more. `ended`: the peer closed. */
  judge: (received: Buffer, ended: boolean) => CheckVerdict | null;
  maxBytes: number;
  /** The verdict when more than `maxBytes` arrived and the first `maxBytes` did not settle the check. */
  tooLong: CheckVerdict;
  timedOut: CheckVerdict;
}

export function tcpExchange(ep: Endpoint, x: StreamExchange, signal: AbortSignal): Promise<CheckVerdict> {
  return new Promise((resolve) => {
    const sock = connect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, localPort: ep.localPort, noDelay: true });
    const done = settleOnce(signal, resolve, () => sock.destroy(), () => x.timedOut);
    let received: Buffer = Buffer.alloc(0);
    sock.once('connect', () => {
      if (x.payload.length > 0) sock.write(x.payload);
    });
    sock.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      // Judged before the cap: a whole answer followed in the same read by more bytes is still an answer.
      const v = x.judge(received.length > x.maxBytes ? received.subarray(0, x.maxBytes) : received, false);
      if (v !== null) done(v);
      else if (received.length > x.maxBytes) done(x.tooLong);
    });
    sock.once('end', () => {
      done(x.judge(received, true) ?? fail('reset', `connection closed after ${received.length} bytes`));
    });
    sock.once('error', (e) => {
      done(verdictFromError(e));
    });
  });
}
