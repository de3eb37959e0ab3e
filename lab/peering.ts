// The lab's two directors as one cluster (docs/cluster.md): each serves its API over TLS on its front
// address, with a certificate from a CA the lab makes with openssl, and reads the other with a peer token
// (never a user's password). So `npm start`'s panel shows the pair on its Cluster page, and drains and
// failovers reach both. The host's browser still speaks plain http to 127.0.0.1: the lab's relay is the
// TLS client (lab/relay.ts), trusting the same CA.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { newPeerToken, peerTokenSha256 } from '../daemon/api/cluster/peer-token.js';

const run = promisify(execFile);
export const API_PORT = 9180;

export interface PeeringDirector {
  name: string;
  /** The address its API listens on and its peers reach it at. */
  address: string;
  dir: string;
}

/** What one director's config says about its API and its peers, and where the lab's relay connects. */
export interface Peering {
  /** The `api:` line (TLS on the director's address). */
  api: string;
  /** The `cluster:` section. */
  cluster: string;
  /** host:port the relay connects to, and the CA it trusts there. */
  target: string;
  ca: string;
}

async function openssl(args: string[]): Promise<void> {
  await run('openssl', args).catch((e: unknown) => {
    throw new Error(`the lab's certificates: openssl ${args.slice(0, 2).join(' ')} failed: ${(e as { stderr?: string }).stderr ?? String(e)}`);
  });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A CA, and for each director a key and a certificate for its address signed by it. */
async function makePki(dir: string, directors: readonly PeeringDirector[]): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const ca = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  await openssl(['req', '-x509', ...EC, '-keyout', caKey, '-out', ca, '-days', '7', '-subj', '/CN=lvsd lab CA']);
  for (const d of directors) {
    const csr = join(d.dir, 'api.csr');
    await openssl(['req', ...EC, '-keyout', join(d.dir, 'api.key'), '-out', csr, '-subj', `/CN=${d.name}`, '-addext', `subjectAltName=IP:${d.address}`]);
    await openssl(['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-days', '7', '-copy_extensions', 'copyall', '-out', join(d.dir, 'api.crt')]);
  }
  return ca;
}

/** Writes the CA, the certificates and the peer tokens; answers each director's part of its config. */
export async function labPeering(workDir: string, directors: readonly PeeringDirector[]): Promise<Peering[]> {
  const ca = await makePki(join(workDir, 'pki'), directors);
  // the token `from` sends to `to`, in from's directory (mode 0600, as `lvsd peer-token` writes it)
  const tokens = new Map<string, string>();
  for (const from of directors) {
    for (const to of directors) {
      if (from === to) continue;
      const token = newPeerToken();
      writeFileSync(join(from.dir, `peer-${to.name}.token`), `${token}\n`, { mode: 0o600 });
      tokens.set(`${from.name}>${to.name}`, token);
    }
  }
  return directors.map((d) => {
    const peers = directors.filter((p) => p !== d).map((p) => `    - name: ${p.name}
      url: https://${p.address}:${API_PORT}
      tokenFile: ${join(d.dir, `peer-${p.name}.token`)}
      acceptTokenSha256: ${peerTokenSha256(tokens.get(`${p.name}>${d.name}`) ?? '')}
      acceptActions: true
      ca: ${ca}
`).join('');
    return {
      api: `api: { listen: ${d.address}:${API_PORT}, socket: ${join(d.dir, 'lvsd.sock')}, tls: { cert: ${join(d.dir, 'api.crt')}, key: ${join(d.dir, 'api.key')} } }`,
      cluster: `cluster:\n  name: lab\n  peers:\n${peers}`,
      target: `${d.address}:${API_PORT}`,
      ca,
    };
  });
}
