// The shape of the state file (/var/lib/lvsd/state.json). Checked on every load: lowdb accepts any JSON,
// and a hand-edited or half-migrated file must be refused with its path and the offending field.
import { Type, type Static } from 'typebox';

export const STATE_VERSION = 1;

export const RoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('admin')]);
export type Role = Static<typeof RoleSchema>;
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

/** Operator override of one real server or a whole virtual server: the state file's, the API's and the panel's. */
export const OverrideSchema = Type.Object(
  {
    drain: Type.Optional(Type.Boolean({ description: 'weight 0; established connections continue' })),
    maintenance: Type.Optional(Type.Boolean({ description: 'out of the table (gracefully drained)' })),
    weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'operator weight over the configured one' })),
  },
  { additionalProperties: false },
);
export type Override = Static<typeof OverrideSchema>;

export const StoredOverrideSchema = Type.Object(
  {
    service: Type.String({ minLength: 1 }),
    realServer: Type.Optional(Type.String({ minLength: 1 })),
    override: OverrideSchema,
    by: Type.String(),
    at: Type.String(),
  },
  { additionalProperties: false },
);
export type StoredOverride = Static<typeof StoredOverrideSchema>;

/** A bgp.announce prefix an operator withdrew from this director (POST /api/v1/bgp/withdraw), until a restore. */
export const StoredBgpWithdrawSchema = Type.Object(
  {
    prefix: Type.String({ minLength: 1 }),
    by: Type.String(),
    at: Type.String(),
  },
  { additionalProperties: false },
);
export type StoredBgpWithdraw = Static<typeof StoredBgpWithdrawSchema>;

export const UserSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    /** "scrypt$N$r$p$salt(base64)$hash(base64)" */
    hash: Type.String({ pattern: '^scrypt\\$' }),
    role: RoleSchema,
    createdAt: Type.String(),
  },
  { additionalProperties: false },
);
export type User = Static<typeof UserSchema>;

export const AuditEntrySchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    at: Type.String(),
    who: Type.String(),
    action: Type.String(),
    target: Type.String(),
    before: Type.Unknown(),
    after: Type.Unknown(),
  },
  { additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntrySchema>;

/**
 * A browser session as the state file keeps it, so a restart of lvsd does not log everyone out: only the
 * sha256 of the cookie's id (the file never holds a usable token), its user and its two clocks (ms).
 */
export const SessionRecordSchema = Type.Object(
  {
    idHash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    user: Type.String({ minLength: 1, maxLength: 64 }),
    createdAt: Type.Integer({ minimum: 0 }),
    lastSeen: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type SessionRecord = Static<typeof SessionRecordSchema>;

export const StateSchema = Type.Object(
  {
    version: Type.Literal(STATE_VERSION),
    overrides: Type.Array(StoredOverrideSchema),
    users: Type.Array(UserSchema),
    audit: Type.Array(AuditEntrySchema),
    /** sha256 of the one-time bootstrap token, while no admin exists. */
    bootstrapTokenHash: Type.Union([Type.String(), Type.Null()]),
    /** Secret that signs session cookies; made on first start, kept across restarts. */
    cookieSecret: Type.String({ minLength: 32 }),
    /** Live browser sessions (absent in files written before sessions were kept). */
    sessions: Type.Optional(Type.Array(SessionRecordSchema)),
    /** Operator withdrawals of BGP prefixes (absent in files written before they were kept). */
    bgpWithdrawn: Type.Optional(Type.Array(StoredBgpWithdrawSchema)),
  },
  { additionalProperties: false },
);
export type State = Static<typeof StateSchema>;
