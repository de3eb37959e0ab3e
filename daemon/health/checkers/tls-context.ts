// The TLS client context of https checks that bring files of their own (a CA, keepalived's SSL block
// client certificate). Built once per set of files, as keepalived builds one SSL_CTX: a key is parsed (and
// its password tried) once, not on every check of every real server; a file changed on disk (a renewed
// certificate) is read again at the next check, without a reload.
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext, type SecureContext } from 'node:tls';

export interface TlsClientFiles {
  /** PEM CA bundle trusted when the server's certificate is verified. */
  ca?: string;
  /** The client certificate presented to the server: PEM chain, PEM key, the key's password. */
  clientCertificate?: { certificate: string; key: string; password?: string };
}

/** By files and password: the context with the files' stamps it was built from (one entry per set of files). */
const cache = new Map<string, { stamps: string; ctx: SecureContext }>();

function stamp(path: string | undefined): string {
  if (path === undefined) return '';
  try {
    const s = statSync(path);
    return `${path}@${s.mtimeMs}:${s.size}`;
  } catch {
    return `${path}@missing`; // read() below says why
  }
}

function read(field: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${field}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** The shared context for these files, or undefined when there are none (Node's default context). Throws Error("field: why"). */
export function tlsClientContext(f: TlsClientFiles): SecureContext | undefined {
  const cc = f.clientCertificate;
  if (f.ca === undefined && cc === undefined) return undefined;
  const key = [f.ca, cc?.certificate, cc?.key, cc?.password].join('\0');
  const stamps = [stamp(f.ca), stamp(cc?.certificate), stamp(cc?.key)].join('\0');
  const hit = cache.get(key);
  if (hit?.stamps === stamps) return hit.ctx;
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
  cache.set(key, { stamps, ctx });
  return ctx;
}
