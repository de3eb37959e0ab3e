// Wire types, shared with the daemon (type-only imports: nothing of the daemon lands in the bundle).
export type {
  DirectorSnapshot,
  DirectorEvent,
  VrrpInstanceSnapshot,
  VirtualServerSnapshot,
  RealServerSnapshot,
  Override,
  VrrpState,
  FailoverHow,
  BgpSnapshot,
} from '../../daemon/director/snapshot.js';
export type { ClusterView, ClusterDirector } from '../../daemon/api/cluster/view.js';
export type { ClusterMember, Difference } from '../../daemon/api/cluster/diff.js';
export type { ConfigChange, ConfigProblem, RunningConfig, ApplyResult } from '../../daemon/director/port.js';

export type { Role } from '../../daemon/state/schema.js';
import type { Role } from '../../daemon/state/schema.js';

export interface Session {
  user: string;
  role: Role;
  csrfToken: string;
  local: boolean;
}

export interface ApiEvent {
  seq: number;
  type: string;
  at: string;
  [k: string]: unknown;
}

export interface AuditEntry {
  id: number;
  at: string;
  who: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

export interface UserView {
  name: string;
  role: Role;
  createdAt: string;
}

export function allows(have: Role, need: Role): boolean {
  const rank: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };
  return rank[have] >= rank[need];
}
