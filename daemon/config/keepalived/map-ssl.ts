// keepalived's top-level SSL block (check_parser.c: password, ca, certificate, key) → the
// clientCertificate of every SSL_GET. keepalived builds one SSL context from it for all its SSL_GET
// checkers (check_ssl.c build_ssl_ctx): the certificate chain and key are presented to a real server that
// asks for them; the CA file is loaded but nothing verifies the server with it (no SSL_CTX_set_verify), so
// it changes nothing and is not carried over. A second SSL block replaces the first ("SSL context already
// specified - replacing").
import type { Directive } from './parser.js';
import { BlockReader, type Context } from './reader.js';

export interface ClientCertificateOut {
  certificate: string;
  key: string;
  password?: string;
}

export interface SslOut {
  clientCertificate?: ClientCertificateOut;
  /** Said on every SSL_GET's http settings: what of the block lvsd does the same without writing it. */
  notes: string[];
}

/** The SSL block of one import (the mapper sets it; every SSL_GET takes a copy). */
export const sslOf = new WeakMap<Context, SslOut>();

export function mapSslBlocks(ctx: Context, blocks: Directive[]): SslOut {
  for (const d of blocks.slice(0, -1)) ctx.reportDirective(d, 'a later SSL block replaces this one (keepalived: "SSL context already specified - replacing")');
  const last = blocks[blocks.length - 1];
  if (last === undefined) return { notes: [] };
  const r = new BlockReader(ctx, last.block ?? [], 'SSL');
  const certD = r.last('certificate');
  const keyD = r.last('key');
  const passD = r.last('password');
  const caD = r.last('ca');
  r.finish();
  const certificate = r.str(certD);
  const key = r.str(keyD);
  // Not a diagnostic: keepalived does nothing with the CA, and neither does lvsd without tlsVerify.
  const notes = caD ? [`SSL ca at ${ctx.displayPos(caD.pos)}: keepalived loads it but verifies no real server with it; not carried over (tlsVerify with ca would)`] : [];
  if (certificate === undefined && key === undefined) {
    if (passD) ctx.reportDirective(passD, 'a password without certificate and key does nothing; not carried over');
    return { notes };
  }
  if (certificate === undefined || key === undefined) {
    ctx.reportDirective(last, `SSL ${certificate === undefined ? 'key without a certificate' : 'certificate without a key'}: lvsd needs both to present a client certificate; not carried over`);
    return { notes };
  }
  const out: ClientCertificateOut = { certificate, key };
  if (certD) ctx.source.at(out, 'certificate', certD.pos);
  if (keyD) ctx.source.at(out, 'key', keyD.pos);
  const password = r.str(passD);
  if (password !== undefined && passD) {
    out.password = password;
    ctx.source.at(out, 'password', passD.pos);
  }
  return { clientCertificate: out, notes };
}
