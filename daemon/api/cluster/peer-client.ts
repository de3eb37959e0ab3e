// Reads one peer director's member view through its API. The connection is made and, over https, its
// certificate checked (CA file and/or pinned sha256 fingerprint) BEFORE the request carrying the peer token
// is written on it; one deadline bounds connect, TLS, request and answer, so a dead or stuck peer costs the
// Cluster page at most the cluster timeout. Errors name what failed, never the token.
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Compile } from 'typebox/compile';
import { ClusterMemberSchema } from '../schemas.js';
import type { ClusterPeer } from '../../config/types.js';
import type { ClusterMember } from './diff.js';

export type PeerAnswer = { ok: true; member: ClusterMember; latencyMs: number } | { ok: false; error: string; latencyMs: number };

export const MEMBER_PATH = '/api/v1/cluster/member';
/** A member view is a snapshot: big pools make it large, but not this large. */
const MAX_BYTES = 32 * 1024 * 1024;

const memberShape = Compile(ClusterMemberSchema);

function open(peer: ClusterPeer, url: URL, ca: string | undefined, signal: AbortSignal): Promise<Socket> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const https = url.protocol === 'https:';
  const port = Number(url.port || (https ? 443 : 80));
  return new Promise((resolve, reject) => {
    if (!https) {
      const s = netConnect({ host, port });
      signal.addEventListener('abort', () => s.destroy(), { once: true });
      s.once('connect', () => { resolve(s); });
      s.once('error', reject);
      return;
    }
    const s = tlsConnect({
      host,
      port,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...(ca !== undefined ? { ca } : {}),
      // a pinned certificate is trusted by its fingerprint alone (self-signed); with a CA the chain must verify too
      rejectUnauthorized: ca !== undefined || peer.fingerprint === undefined,
    });
    signal.addEventListener('abort', () => s.destroy(), { once: true });
    s.once('secureConnect', () => {
      const got = s.getPeerCertificate().fingerprint256;
      if (peer.fingerprint !== undefined && got !== peer.fingerprint) {
        s.destroy();
        reject(new Error(`certificate fingerprint ${got} is not the pinned ${peer.fingerprint}`));
        return;
      }
      resolve(s);
    });
    s.once('error', reject);
  });
}

async function get(peer: ClusterPeer, signal: AbortSignal): Promise<ClusterMember> {
  const token = (await readFile(peer.tokenFile, 'utf8').catch((e: unknown) => {
    throw new Error(`cannot read tokenFile ${peer.tokenFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  })).trim();
  if (token === '') throw new Error(`tokenFile ${peer.tokenFile} is empty`);
  const url = new URL(MEMBER_PATH, `${peer.url}/`);
  const ca = peer.ca === undefined ? undefined : await readFile(peer.ca, 'utf8').catch((e: unknown) => {
    throw new Error(`cannot read ca ${peer.ca ?? ''}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  });
  const socket = await open(peer, url, ca, signal);
  const body = await new Promise<string>((resolve, reject) => {
    const req = request({
      createConnection: () => socket,
      method: 'GET',
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      headers: { host: url.host, accept: 'application/json', authorization: `Bearer ${token}` },
      signal,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) req.destroy(new Error(`answer larger than ${MAX_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) {
          let why = '';
          try {
            const m = (JSON.parse(text) as { message?: unknown }).message;
            if (typeof m === 'string') why = m;
          } catch { /* not lvsd's error shape */ }
          reject(new Error(`HTTP ${res.statusCode ?? '?'}${why === '' ? '' : `: ${why}`}`));
        } else resolve(text);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    throw new Error('the answer is not JSON');
  }
  if (!memberShape.Check(data)) throw new Error('the answer is not an lvsd cluster member view (another lvsd version?)');
  return data as ClusterMember;
}

/** The peer's member view, or why not; resolves within `timeoutMs` (plus a few ms) whatever the peer does. */
export async function fetchPeer(peer: ClusterPeer, timeoutMs: number, now: () => number = Date.now): Promise<PeerAnswer> {
  const t0 = now();
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const member = await Promise.race([get(peer, ctl.signal), deadline]);
    return { ok: true, member, latencyMs: now() - t0 };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const text = err.code !== undefined && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message;
    return { ok: false, error: text, latencyMs: now() - t0 };
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}
