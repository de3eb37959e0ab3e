// A Host allow-list against DNS rebinding. A page on evil.example can make its own name resolve to
// 127.0.0.1 and then talk to a loopback panel "same-origin": the browser still sends `Host:
// evil.example`. So a request that arrived on a loopback address must name this panel — localhost,
// 127.0.0.1, [::1], the address it arrived on, or a name in `allowedHosts` — or it is refused before
// anything else runs (the web files included). A panel listening beyond loopback answers to whatever
// names the operator's DNS gives it; there the list applies only when one is given.
import fp from 'fastify-plugin';
import { isLoopback } from '../../net/addr.js';
import { HttpError } from './errors.js';
import type { Api } from '../types.js';

export interface HostCheckOptions {
  /** More names (or addresses) the panel answers to, e.g. a DNS name for a panel beyond loopback. */
  allowedHosts: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** The host part of a Host header, lower-cased, without port or brackets; null when it is not host[:port]. */
export function hostOf(header: string): string | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/@\s]+))(?::\d{1,5})?$/.exec(header.trim());
  const host = m?.[1] ?? m?.[2];
  return host === undefined ? null : host.toLowerCase().replace(/\.$/, '');
}


/** Whether a request with this Host header, arriving on `localAddress` (undefined: not a socket), may go on. */
export function hostAllowed(header: string | undefined, localAddress: string | undefined, allowedHosts: readonly string[]): boolean {
  const allowed = allowedHosts.map((h) => hostOf(h) ?? h.toLowerCase());
  const guarded = allowed.length > 0 || localAddress === undefined || isLoopback(localAddress);
  if (!guarded) return true;
  if (header === undefined) return true; // HTTP/1.0 without Host: not a browser, nothing to rebind
  const host = hostOf(header);
  if (host === null) return false;
  const arrivedOn = localAddress?.toLowerCase().replace(/^::ffff:/, '');
  return LOOPBACK_NAMES.includes(host) || host === arrivedOn || allowed.includes(host);
}

export default fp(
  (app: Api, opts: HostCheckOptions) => {
    app.addHook('onRequest', async (req) => {
      const header = req.headers.host;
      if (!hostAllowed(header, req.socket.localAddress, opts.allowedHosts)) {
        const shown = JSON.stringify(String(header).slice(0, 100));
        throw new HttpError(403, `Host ${shown} is not a name of this panel (a DNS rebinding guard); use localhost, 127.0.0.1 or [::1], or list the name in the API's allowed hosts`);
      }
      await Promise.resolve();
    });
  },
  { name: 'lvsd-host-check', dependencies: ['lvsd-errors'] },
);
