// What GET /api/v1/cluster answers: the one shape the route builds, the wire schema checks (schemas.ts)
// and the panel's Cluster page reads.
import type { ClusterMember, Difference } from './diff.js';

export interface ClusterDirector {
  name: string;
  /** null for the director that answered. */
  url: string | null;
  reachable: boolean;
  /** Why the peer could not be read, or null. */
  error: string | null;
  latencyMs: number;
  member: ClusterMember | null;
}

export interface ClusterView {
  name: string;
  /** The director that answered. */
  self: string;
  at: string;
  directors: ClusterDirector[];
  differences: Difference[];
}
