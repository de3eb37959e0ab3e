// Peer tokens: what one director sends another to read its API (Authorization: Bearer). The receiving
// config keeps only the token's sha256 — a token is 32 random bytes, so a plain hash is as good as a slow
// one and costs nothing per request — and the comparison runs in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClusterConfig, ClusterPeer } from '../../config/types.js';

export function newPeerToken(): string {
  return randomBytes(32).toString('base64url');
}

export function peerTokenSha256(token: string): string {
  return createHash('sha256').update(token.trim()).digest('hex');
}

/** The token of an "Authorization: Bearer …" header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1] ?? null;
}

/** The peer whose accepted token this is, or null. */
export function peerOfToken(cluster: ClusterConfig | null, token: string): ClusterPeer | null {
  const got = Buffer.from(peerTokenSha256(token), 'hex');
  let found: ClusterPeer | null = null;
  for (const p of cluster?.peers ?? []) {
    if (p.acceptTokenSha256 === undefined) continue;
    // every peer compared, so the time does not tell which one (or whether any) matched
    if (timingSafeEqual(got, Buffer.from(p.acceptTokenSha256, 'hex')) && found === null) found = p;
  }
  return found;
}
