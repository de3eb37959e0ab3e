// The cluster section: its cross-field rules (semantic) and its normalised form, in one file like bgp.ts.
// A peer token crosses the network on every read, so it goes in clear only to a loopback address; beyond
// loopback the peer's certificate must be trusted by a CA file or pinned by its fingerprint (a system CA
// store would let anyone with any public certificate for that name read the token).
import { isIP } from 'node:net';
import { isLoopback } from '../net/addr.js';
import { parseDuration } from './formats.js';
import type { Issue } from './errors.js';
import type { ConfigFile } from './schema.js';
import type { ClusterConfig } from './types.js';

type ClusterFile = NonNullable<ConfigFile['cluster']>;

/** The host of an http(s) URL without brackets, or null when it does not parse. */
function urlHost(url: string): { protocol: string; host: string } | null {
  try {
    const u = new URL(url);
    return { protocol: u.protocol, host: u.hostname.replace(/^\[(.*)\]$/, '$1') };
  } catch {
    return null;
  }
}

export function checkCluster(cluster: ClusterFile, nodeName: string | undefined): Issue[] {
  const errors: Issue[] = [];
  if (cluster.timeout !== undefined && parseDuration(cluster.timeout) === 0) errors.push({ path: ['cluster', 'timeout'], message: 'a peer must get some time to answer (e.g. 2s)' });
  const seen = new Set<string>();
  cluster.peers.forEach((p, i) => {
    const at = (k: string): Issue['path'] => ['cluster', 'peers', i, k];
    if (p.acceptActions === true && p.acceptTokenSha256 === undefined) errors.push({ path: at('acceptActions'), message: 'acceptActions needs acceptTokenSha256 (the token the peer forwards with)' });
    if (seen.has(p.name)) errors.push({ path: at('name'), message: `peer "${p.name}" is listed twice` });
    seen.add(p.name);
    if (nodeName !== undefined && p.name === nodeName) errors.push({ path: at('name'), message: `"${p.name}" is this director's own node.name; list only the others` });
    const u = urlHost(p.url);
    if (u === null) {
      errors.push({ path: at('url'), message: `"${p.url}" is not a URL` });
      return;
    }
    const loopback = u.host === 'localhost' || (isIP(u.host) !== 0 && isLoopback(u.host));
    if (u.protocol === 'http:' && !loopback) errors.push({ path: at('url'), message: 'plain http sends the peer token in clear: use https beyond loopback' });
    if (u.protocol === 'https:' && !loopback && p.ca === undefined && p.fingerprint === undefined) {
      errors.push({ path: at('url'), message: 'an https peer beyond loopback needs ca (a CA file) or fingerprint (its certificate pinned)' });
    }
    if (u.protocol === 'http:' && (p.ca !== undefined || p.fingerprint !== undefined)) {
      errors.push({ path: at(p.ca !== undefined ? 'ca' : 'fingerprint'), message: 'ca and fingerprint apply to an https url only' });
    }
  });
  return errors;
}

export function clusterConfig(cluster: ClusterFile): ClusterConfig {
  return {
    name: cluster.name ?? 'cluster',
    timeoutMs: cluster.timeout === undefined ? 2000 : (parseDuration(cluster.timeout) ?? 2000),
    peers: cluster.peers.map((p) => ({
      name: p.name,
      url: p.url.replace(/\/+$/, ''),
      tokenFile: p.tokenFile,
      acceptActions: p.acceptActions ?? false,
      ...(p.acceptTokenSha256 !== undefined ? { acceptTokenSha256: p.acceptTokenSha256 } : {}),
      ...(p.ca !== undefined ? { ca: p.ca } : {}),
      ...(p.fingerprint !== undefined ? { fingerprint: p.fingerprint.toUpperCase() } : {}),
    })),
  };
}
