// Shared types of the API's plugins and routes.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { StateStore, Role } from '../state/store.js';
import type { DirectorPort } from '../director/port.js';
import type { EventLog } from './event-log.js';
import type { SessionTable } from './sessions.js';

export type Api = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface ApiDeps {
  director: DirectorPort;
  store: StateStore;
  events: EventLog;
  sessions: SessionTable;
}

export interface Principal {
  name: string;
  role: Role;
  /** Came through the local admin socket (trusted as admin, no cookie, no CSRF). */
  local: boolean;
  /** Another director reading with its peer token (cluster section): a viewer that may only GET. */
  peer?: true;
}

/** Who may call a route: nobody logged in ('public') or at least this role. */
export type Access = 'public' | Role;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    csrfToken: string | null;
    /** The session id behind `principal` (null for the local socket and for nobody). */
    sessionId: string | null;
  }
  interface FastifyContextConfig {
    /** Required on every /api route; checked server-side by the auth plugin. */
    access?: Access;
    /** State-changing routes that cannot carry a CSRF token yet (login, bootstrap). */
    csrfExempt?: boolean;
    /** A peer with acceptActions may call this route for one of its users (cluster/forward.ts). */
    peerAction?: boolean;
  }
}

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export function allows(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need];
}
