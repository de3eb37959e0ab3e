// HTTP_GET / SSL_GET: one GET per check on a fresh connection (HTTP/1.1 with "Connection: close", or
// keepalived's HTTP/1.0 forms), accepted when the status is in range and, if asked, the body matches a regex or md5 digest.
// The request bytes, regex and ranges are built once per target.
import { createHash } from 'node:crypto';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';
import { fail, OK_VERDICT, type CheckVerdict } from '../types.js';
import type { Endpoint, HttpCheckOptions } from '../options.js';
import { verdictFromError } from './errors.js';
import { bodyRegexFailure, bodyRegexPasses, compileBodyRegex, type BodyRegex } from './body-regex.js';
import { HttpResponseReader, parseStatusRanges, statusAccepted } from './http-response.js';
import { settleOnce, type Probe } from './probe.js';
import { tlsClientContext } from './tls-context.js';

export interface PreparedHttp {
  request: Buffer;
  ranges: [number, number][];
  regex: BodyRegex | undefined;
  digest: string | undefined;
    /** secureContext: the files' context now (a renewed certificate is picked up at the next check); throws Error("field: why"). */
  tls: { servername: string | undefined; rejectUnauthorized: boolean; secureContext: () => SecureContext | undefined } | undefined;
}

/** Compiles the options; throws Error(field: message) on bad input. */
export function prepareHttp(ep: Endpoint, o: HttpCheckOptions, secure: boolean): PreparedHttp {
  const path = o.path ?? '/';
  if (!path.startsWith('/') || /[\s]/.test(path)) throw new Error(`path: must start with "/" and hold no spaces: ${JSON.stringify(path)}`);
  let ranges: [number, number][];
  try {
    ranges = parseStatusRanges(o.status ?? ['200-299']);
  } catch (e) {
    throw new Error(`status: ${(e as Error).message}`);
  }
  const regex = compileBodyRegex(o);
  if (o.digest !== undefined && !/^[0-9a-fA-F]{32}$/.test(o.digest)) throw new Error('digest: want 32 hex digits (md5)');
  const defaultPort = secure ? 443 : 80;
  const hostAddr = ep.family === 6 ? `[${ep.host.split('%')[0] ?? ep.host}]` : ep.host;
  const host = o.host ?? (ep.port === defaultPort ? hostAddr : `${hostAddr}:${ep.port}`);
  // keepalived http_protocol: HTTP/1.0 closes by itself, so 1.0 sends no Connection header (measured: genhash -P).
  const protocol = o.protocol ?? '1.1';
  const lines = [`GET ${path} HTTP/${protocol === '1.1' ? '1.1' : '1.0'}`, `Host: ${host}`, 'User-Agent: lvsd-health', 'Accept: */*'];
  if (protocol !== '1.0') lines.push('Connection: close');
  for (const [k, v] of Object.entries(o.headers ?? {})) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || /[\r\n]/.test(v)) throw new Error(`headers: bad header ${JSON.stringify(k)}`);
    lines.push(`${k}: ${v}`);
  }
  const nameForSni = o.sni ?? (o.host !== undefined ? o.host.replace(/:\d+$/, '') : undefined);
  const files = { ca: o.ca, clientCertificate: o.clientCertificate };
  if (secure) tlsClientContext(files, { fresh: true }); // unreadable files or a wrong password are a bad option, named now
  return {
    request: Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'),
    ranges,
    regex,
    digest: o.digest?.toLowerCase(),
    tls: secure
      ? {
          // SNI must be a name, never an address (RFC 6066 §3).
          servername: nameForSni !== undefined && isIP(nameForSni) === 0 ? nameForSni : undefined,
          rejectUnauthorized: o.tlsVerify ?? false,
          secureContext: () => tlsClientContext(files),
        }
      : undefined,
  };
}

function judge(p: PreparedHttp, r: HttpResponseReader): CheckVerdict {
  if (!statusAccepted(r.status, p.ranges)) return fail('status', `status ${r.status}`);
  if (p.regex !== undefined && !bodyRegexPasses(p.regex, r.body)) return fail('regex-mismatch', bodyRegexFailure(p.regex));
  if (p.digest !== undefined) {
    const got = createHash('md5').update(r.body).digest('hex');
    if (got !== p.digest) return fail('digest-mismatch', `body md5 ${got}`);
  }
  return OK_VERDICT;
}

/** Feeds a chunk of the response; a verdict once the bytes so far settle the check. */
export function verdictAfterData(p: PreparedHttp, reader: HttpResponseReader, chunk: Buffer): CheckVerdict | undefined {
  reader.push(chunk);
  if (reader.status !== 0 && !statusAccepted(reader.status, p.ranges)) return fail('status', `status ${reader.status}`);
  if (reader.state === 'complete') return judge(p, reader);
  if (reader.state === 'bad') return fail('protocol', reader.problem);
  return undefined;
}

/** The verdict when the peer closed the connection. */
export function verdictAtEnd(p: PreparedHttp, reader: HttpResponseReader): CheckVerdict {
  reader.end();
  if (reader.state === 'complete') return judge(p, reader);
  return fail(reader.status === 0 ? 'reset' : 'protocol', reader.problem);
}

export function httpProbe(ep: Endpoint, p: PreparedHttp, timeoutMs: number): Probe {
  const needBody = p.regex !== undefined || p.digest !== undefined;
  const timedOut = fail('timeout', `no complete answer in ${timeoutMs} ms`);
  return (signal) =>
    new Promise((resolve) => {
      let secureContext: SecureContext | undefined;
      try {
        secureContext = p.tls?.secureContext();
      } catch (e) {
        resolve(fail('tls', (e as Error).message));
        return;
      }
      const reader = new HttpResponseReader(needBody);
      // bindTo for TLS: tls.connect has no localAddress, so the TCP socket is made first and wrapped.
      const raw = netConnect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, localPort: ep.localPort, noDelay: true });
      const sock: Socket =
        p.tls === undefined
          ? raw
          : tlsConnect({ socket: raw, servername: p.tls.servername, rejectUnauthorized: p.tls.rejectUnauthorized, secureContext });
      const done = settleOnce(signal, resolve, () => {
        sock.destroy();
        raw.destroy();
      }, () => timedOut);
      if (sock !== raw) {
        raw.once('error', (e) => {
          done(verdictFromError(e));
        });
      }
      sock.once(p.tls === undefined ? 'connect' : 'secureConnect', () => {
        sock.write(p.request);
      });
      sock.on('data', (chunk: Buffer) => {
        const v = verdictAfterData(p, reader, chunk);
        if (v !== undefined) done(v);
      });
      sock.once('end', () => {
        done(verdictAtEnd(p, reader));
      });
      sock.once('error', (e) => {
        done(verdictFromError(e));
      });
    });
}
