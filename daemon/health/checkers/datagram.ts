// One UDP exchange on a connected socket: send, then judge replies until one settles the check.
// A connected socket is what turns an ICMP port-unreachable into ECONNREFUSED ("refused").
import { createSocket } from 'node:dgram';
import type { CheckVerdict } from '../types.js';
import type { Endpoint } from '../options.js';
import { verdictFromError } from './errors.js';
import { settleOnce } from './probe.js';

export interface Exchange {
  payload: Buffer;
  /** Judges one reply: a verdict settles the check, null ignores the datagram (not ours). */
  judge: (msg: Buffer) => CheckVerdict | null;
  /** Without a required reply: the verdict after `ms` of silence (no ICMP error). */
  quiet?: { ms: number; verdict: CheckVerdict };
  timedOut: CheckVerdict;
}

export function udpExchange(ep: Endpoint, x: Exchange, signal: AbortSignal): Promise<CheckVerdict> {
  return new Promise((resolve) => {
    const sock = createSocket(ep.family === 6 ? 'udp6' : 'udp4');
    let quietTimer: NodeJS.Timeout | undefined;
    const done = settleOnce(
      signal,
      resolve,
      () => {
        if (quietTimer !== undefined) clearTimeout(quietTimer);
        sock.close();
      },
      () => x.timedOut,
    );
    sock.on('error', (e) => {
      done(verdictFromError(e));
    });
    sock.on('message', (msg) => {
      const v = x.judge(msg);
      if (v !== null) done(v);
    });
    // No callback to connect(): a failed connect (no route, EACCES…) then arrives as 'error' above,
    // and 'connect' only on success — sending on a socket that failed to connect throws.
    sock.once('connect', () => {
      sock.send(x.payload, (e) => {
        if (e) {
          done(verdictFromError(e));
          return;
        }
        if (x.quiet !== undefined) {
          const q = x.quiet;
          quietTimer = setTimeout(() => {
            done(q.verdict);
          }, q.ms);
        }
      });
    });
    const send = (): void => {
      sock.connect(ep.port, ep.host);
    };
    if (ep.localAddress !== undefined || ep.localPort !== undefined) sock.bind({ address: ep.localAddress ?? (ep.family === 6 ? '::' : '0.0.0.0'), port: ep.localPort ?? 0 }, send);
    else send();
  });
}
