// The TLS client context of https checks that bring files of their own (a CA, keepalived's SSL block
// client certificate). Built once per set of files, as keepalived builds one SSL_CTX: a key is parsed (and
// its password tried) once, not on every check of every real server; a file changed on disk (a renewed
// certificate) is noticed within a second and read again, without a reload. The files are looked at (stat)
// at most once a second per set, not at every check: 10,000 https checks a second would be 30,000 stats.
import { statSync } from 'node:fs';
import { MAX_PEM_BYTES, pemText, readCappedSync } from '../../read-capped.js';
import { createSecureContext, type SecureContext } from 'node:tls';

export interface TlsClientFiles {
  /** PEM CA bundle trusted when the server's certificate is verified. */
  ca?: string;
  /** The client certificate presented to the server: PEM chain, PEM key, the key's password. */
  clientCertificate?: { certificate: string; key: string; password?: string };
}

/** How long a set of files is taken as unchanged without looking at them again. */
export const RESTAT_MS = 1000;

/** By files and password: the context with the files' stamps it was built from (one entry per set of files). */
const cache = new Map<string, { stamps: string; ctx: SecureContext; checkedAt: number }>();

function stamp(path: string | undefined): string {
  if (path === undefined) return '';
  try {
    const s = statSync(path);
    return `${path}@${s.mtimeMs}:${s.size}`;
  } catch {
    return `${path}@missing`; // read() below says why
  }
}

// Read on the event loop (a config being checked reads at once): non-blocking, not waiting for a silent
// writer, and bounded, so a FIFO or /dev/zero named here cannot stop every check (readFileSync of a FIFO
// with no writer blocked the loop for ever).
function read(field: string, path: string): string {
  try {
    return pemText(readCappedSync(path, { max: MAX_PEM_BYTES, idleMs: 0 }));
  } catch (e) {
    throw new Error(`${field}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * The shared context for these files, or undefined when there are none (Node's default context). Throws
 * Error("field: why"). `fresh`: look at the files now, however recently they were (a config being checked).
 */
export function tlsClientContext(f: TlsClientFiles, o: { fresh?: boolean; now?: number } = {}): SecureContext | undefined {
  const now = o.now ?? performance.now();
  const cc = f.clientCertificate;
  if (f.ca === undefined && cc === undefined) return undefined;
  const key = [f.ca, cc?.certificate, cc?.key, cc?.password].join('\0');
  const hit = cache.get(key);
  if (hit !== undefined && o.fresh !== true && now - hit.checkedAt < RESTAT_MS) return hit.ctx;
  const stamps = [stamp(f.ca), stamp(cc?.certificate), stamp(cc?.key)].join('\0');
  if (hit?.stamps === stamps) {
    hit.checkedAt = now;
    return hit.ctx;
  }
  const options: Parameters<typeof createSecureContext>[0] = {};
  if (f.ca !== undefined) options.ca = read('ca', f.ca);
  if (cc !== undefined) {
    options.cert = read('clientCertificate.certificate', cc.certificate);
    options.key = read('clientCertificate.key', cc.key);
    if (cc.password !== undefined) options.passphrase = cc.password;
  }
  let ctx: SecureContext;
  try {
    ctx = createSecureContext(options);
  } catch (e) {
    // OpenSSL's words ("bad decrypt", "key values mismatch"); the password is never part of them.
    throw new Error(`${cc !== undefined ? 'clientCertificate' : 'ca'}: ${(e as Error).message}`);
  }
  cache.set(key, { stamps, ctx, checkedAt: now });
  return ctx;
}
