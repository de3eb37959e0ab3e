// TCP_CHECK: the server is up when a TCP connection is established. The connection is then closed
// with a reset (SO_LINGER 0, as haproxy's TCP checks do): no TIME_WAIT piles up on the director at
// 10,000 checks/s, and the real server spends nothing on an orderly close.
import { connect } from 'node:net';
import { fail, OK_VERDICT } from '../types.js';
import type { Endpoint } from '../options.js';
import { verdictFromError } from './errors.js';
import { settleOnce, type Probe } from './probe.js';

export function tcpProbe(ep: Endpoint, timeoutMs: number): Probe {
  const timedOut = fail('timeout', `no connection in ${timeoutMs} ms`);
  return (signal) =>
    new Promise((resolve) => {
      const sock = connect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, localPort: ep.localPort, noDelay: true });
      let connected = false;
      const done = settleOnce(signal, resolve, () => {
        if (connected) sock.resetAndDestroy();
        else sock.destroy();
      }, () => timedOut);
      sock.once('connect', () => {
        connected = true;
        done(OK_VERDICT);
      });
      sock.once('error', (e) => {
        done(verdictFromError(e));
      });
    });
}
