// TCP_CHECK: the server is up when a TCP connection is established.
import { connect } from 'node:net';
import { fail, OK_VERDICT } from '../types.js';
import type { Endpoint } from '../options.js';
import { verdictFromError } from './errors.js';
import { settleOnce, type Probe } from './probe.js';

export function tcpProbe(ep: Endpoint, timeoutMs: number): Probe {
  const timedOut = fail('timeout', `no connection in ${timeoutMs} ms`);
  return (signal) =>
    new Promise((resolve) => {
      const sock = connect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, noDelay: true });
      const done = settleOnce(signal, resolve, () => sock.destroy(), () => timedOut);
      sock.once('connect', () => {
        done(OK_VERDICT);
      });
      sock.once('error', (e) => {
        done(verdictFromError(e));
      });
    });
}
