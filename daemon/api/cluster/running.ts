// The cluster section and the VRRP authentication digests of the config this director runs. The API reads
// them from the running config itself (not from a copy handed over at start), so a reload that adds a peer
// or rotates an accepted token takes effect at once; the text is parsed again only when its hash changes.
import { createHash } from 'node:crypto';
import { loadConfigText } from '../../config/load.js';
import type { ClusterConfig, Config } from '../../config/types.js';
import type { DirectorPort } from '../../director/port.js';

export interface RunningClusterView {
  /** null: the running config has no cluster section. */
  cluster: ClusterConfig | null;
  vrrpAuth: Record<string, string>;
}

/**
 * "none", or "PASS " and 12 hex digits of a salted sha256 of the password: enough to tell two directors'
 * passwords apart without putting the password in an answer. (VRRPv2 PASS travels in clear in every
 * advert anyway; the digest only keeps it out of the API.)
 */
export function authDigest(auth: Config['vrrp']['instances'][number]['authentication']): string {
  if (auth === undefined) return 'none';
  return `${auth.type} ${createHash('sha256').update(`lvsd vrrp auth\0${auth.password}`).digest('hex').slice(0, 12)}`;
}

export class RunningCluster {
  #hash: string | null = null;
  #view: Promise<RunningClusterView> | null = null;

  constructor(private readonly director: DirectorPort) {}

  current(): Promise<RunningClusterView> {
    const hash = this.director.snapshot().config.hash;
    if (this.#view === null || hash !== this.#hash) {
      this.#hash = hash;
      this.#view = this.#load();
    }
    return this.#view;
  }

  async #load(): Promise<RunningClusterView> {
    const running = await this.director.runningConfig();
    const r = loadConfigText(running.text, running.path);
    if (!r.ok) return { cluster: null, vrrpAuth: {} };
    const vrrpAuth: Record<string, string> = {};
    for (const i of r.config.vrrp.instances) vrrpAuth[i.name] = authDigest(i.authentication);
    return { cluster: r.config.cluster ?? null, vrrpAuth };
  }
}
