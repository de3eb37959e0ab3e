// Reads one peer director's member view, or forwards an operator's action, through its API. The connection is made and, over https, its
// certificate checked (CA file and/or pinned sha256 fingerprint) BEFORE the request carrying the peer token
// is written on it; one deadline bounds connect, TLS, request and answer, so a dead or stuck peer costs the
// Cluster page at most the cluster timeout. Errors name what failed, never the token.
import { MAX_PEM_BYTES, pemText, readCapped } from '../../read-capped.js';
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

export interface PeerRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  /** The user an action is forwarded for (x-lvsd-user). */
  user?: string;
}

/**
 * A peer's tokenFile or ca, read at each request. Read non-blocking and bounded: a FIFO nobody writes to used to
 * take one of libuv's four threads for ever at every poll (the request itself timed out), until none was left
 * for the state file, the config or DNS.
 */
async function readPeerFile(file: string, what: 'tokenFile' | 'ca'): Promise<string> {
  try {
    return pemText(await readCapped(file, { max: MAX_PEM_BYTES, idleMs: 1000 }));
  } catch (e) {
    throw new Error(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))}`);
  }
}

/** One request to the peer with its token: the status and the JSON answer (lvsd's error message on 4xx/5xx). */
async function call(peer: ClusterPeer, r: PeerRequest, signal: AbortSignal): Promise<{ status: number; data: unknown }> {
  const token = (await readPeerFile(peer.tokenFile, 'tokenFile')).trim();
  if (token === '') throw new Error(`tokenFile ${peer.tokenFile} is empty`);
  const url = new URL(r.path, `${peer.url}/`);
  const ca = peer.ca === undefined ? undefined : await readPeerFile(peer.ca, 'ca');
  const socket = await open(peer, url, ca, signal);
  const payload = r.body === undefined ? null : JSON.stringify(r.body);
  const headers: Record<string, string> = { host: url.host, accept: 'application/json', authorization: `Bearer ${token}` };
  if (payload !== null) headers['content-type'] = 'application/json';
  if (r.user !== undefined) headers['x-lvsd-user'] = r.user;
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({
      createConnection: () => socket,
      method: r.method,
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      headers,
      signal,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) req.destroy(new Error(`answer larger than ${MAX_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }); });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload ?? undefined);
  });
  let data: unknown;
  try {
    data = JSON.parse(answer.text);
  } catch {
    throw new Error(`HTTP ${answer.status}: the answer is not JSON`);
  }
  if (answer.status < 200 || answer.status > 299) {
    const m = (data as { message?: unknown } | null)?.message;
    throw new Error(`HTTP ${answer.status}${typeof m === 'string' ? `: ${m}` : ''}`);
  }
  return { status: answer.status, data };
}

/** Runs `work` under one deadline: every socket it opened is destroyed when the time is up. */
async function within<T>(timeoutMs: number, now: () => number, work: (signal: AbortSignal) => Promise<T>): Promise<{ ok: true; value: T; latencyMs: number } | { ok: false; error: string; latencyMs: number }> {
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
    const value = await Promise.race([work(ctl.signal), deadline]);
    return { ok: true, value, latencyMs: now() - t0 };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const text = err.code !== undefined && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message;
    return { ok: false, error: text, latencyMs: now() - t0 };
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}

/** The peer's member view, or why not; resolves within `timeoutMs` (plus a few ms) whatever the peer does. */
export async function fetchPeer(peer: ClusterPeer, timeoutMs: number, now: () => number = Date.now): Promise<PeerAnswer> {
  const r = await within(timeoutMs, now, async (signal) => {
    const { data } = await call(peer, { method: 'GET', path: MEMBER_PATH }, signal);
    if (!memberShape.Check(data)) throw new Error('the answer is not an lvsd cluster member view (another lvsd version?)');
    return data as ClusterMember;
  });
  return r.ok ? { ok: true, member: r.value, latencyMs: r.latencyMs } : r;
}

/** An action forwarded to the peer for `r.user`: its JSON answer, or why not (same deadline rules). */
export async function forwardToPeer(peer: ClusterPeer, r: PeerRequest & { user: string }, timeoutMs: number): Promise<{ ok: true; data: unknown } | { ok: false; error: string }> {
  const a = await within(timeoutMs, Date.now, async (signal) => (await call(peer, r, signal)).data);
  return a.ok ? { ok: true, data: a.value } : { ok: false, error: a.error };
}
