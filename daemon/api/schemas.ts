// TypeBox schemas of everything the API takes and returns. One schema validates input, serialises output
// (fast-json-stringify drops anything not declared) and documents the route in /api/v1/openapi.json.
import { Type, type Static, type TSchema } from 'typebox';
import type { DirectorEvent, DirectorSnapshot, VrrpState } from '../director/snapshot.js';
import type { DifferenceKind } from './cluster/diff.js';
import type { ClusterView } from './cluster/view.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Iso = Type.String({ description: 'ISO-8601 time, UTC' });

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String({ description: 'What was wrong, naming the field or object' }),
    details: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'Error' },
);

// The state file's own schemas: one definition of a role and of an override for the store, the API and the panel.
import { OverrideSchema, RoleSchema } from '../state/schema.js';

export { OverrideSchema, RoleSchema };

const VrrpStateSchema = Type.Union([Type.Literal('INIT'), Type.Literal('BACKUP'), Type.Literal('MASTER'), Type.Literal('FAULT')]);
/** The schema spells the one VrrpState (vrrp/machine.ts): this stops compiling the day they differ. */
const _sameStates: [Static<typeof VrrpStateSchema>] extends [VrrpState] ? ([VrrpState] extends [Static<typeof VrrpStateSchema>] ? true : never) : never = true;

const RatesSchema = Type.Object({
  conns: Type.Number(), inPackets: Type.Number(), outPackets: Type.Number(), inBytes: Type.Number(), outBytes: Type.Number(),
  cps: Type.Number(), inPps: Type.Number(), outPps: Type.Number(), inBps: Type.Number(), outBps: Type.Number(),
});

export const VrrpInstanceSchema = Type.Object({
  name: Type.String(),
  interface: Type.String(),
  vrid: Type.Integer(),
  version: Type.Union([Type.Literal(2), Type.Literal(3)]),
  family: Type.Union([Type.Literal(4), Type.Literal(6)]),
  state: VrrpStateSchema,
  basePriority: Type.Integer(),
  effectivePriority: Type.Integer(),
  masterAddress: Nullable(Type.String()),
  vips: Type.Array(Type.String()),
  peers: Type.Array(Type.Object({ address: Type.String(), priority: Type.Integer(), lastSeen: Iso })),
  transitions: Type.Array(Type.Object({ at: Iso, from: VrrpStateSchema, to: VrrpStateSchema, reason: Type.String() })),
  adverts: Type.Object({ sent: Type.Number(), received: Type.Number(), dropped: Type.Record(Type.String(), Type.Number()) }),
  forced: Nullable(Type.Union([Type.Literal('lower-priority'), Type.Literal('maintenance')])),
  syncGroup: Nullable(Type.String()),
});

const MethodSchema = Type.Union([Type.Literal('nat'), Type.Literal('dr'), Type.Literal('tun')]);

export const RealServerSchema = Type.Object({
  id: Type.String(),
  address: Type.String(),
  port: Type.Integer(),
  method: MethodSchema,
  weight: Type.Object({ configured: Type.Integer(), effective: Nullable(Type.Integer()) }),
  health: Type.Object({
    status: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('unknown')]),
    checker: Type.String(),
    since: Nullable(Iso),
    lastCheck: Nullable(Type.Object({ at: Iso, ok: Type.Boolean(), latencyMs: Type.Number(), result: Type.String(), error: Nullable(Type.String()) })),
  }),
  override: Nullable(OverrideSchema),
  connections: Type.Object({ active: Type.Integer(), inactive: Type.Integer() }),
  counters: Nullable(RatesSchema),
});

export const VirtualServiceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  protocol: Type.Union([Type.Literal('tcp'), Type.Literal('udp'), Type.Literal('sctp')]),
  address: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  fwmark: Nullable(Type.Integer()),
  method: MethodSchema,
  scheduler: Type.String(),
  quorum: Type.Object({ required: Type.Integer(), liveWeight: Type.Integer(), up: Type.Boolean(), sorryServerActive: Type.Boolean() }),
  checksSuspended: Type.Boolean({ description: 'haSuspend (keepalived ha_suspend) and this director does not hold the virtual address: the checks do not run, the real servers keep their last verdicts' }),
  override: Nullable(OverrideSchema),
  counters: Nullable(RatesSchema),
  realServers: Type.Array(RealServerSchema),
});

export const SnapshotSchema = Type.Object(
  {
    node: Type.String(),
    version: Type.String(),
    startedAt: Iso,
    at: Iso,
    dataplane: Type.Object({ kind: Type.String(), reason: Type.String() }),
    vrrp: Type.Array(VrrpInstanceSchema),
    vrrpProblem: Nullable(Type.String()),
    virtualServices: Type.Array(VirtualServiceSchema),
    bgp: Type.Optional(Type.Object({
      speaker: Type.Literal('bird'),
      socket: Type.String(),
      problem: Nullable(Type.String()),
      sessions: Type.Array(Type.Object({ name: Type.String(), state: Type.String(), since: Type.String(), info: Type.String() })),
      announcements: Type.Array(Type.Object({ prefix: Type.String(), protocol: Type.String(), announced: Type.Boolean(), reason: Type.String(), withdrawnBy: Nullable(Type.String()) })),
    }, { description: 'The BGP speaker lvsd drives (BIRD): its sessions and the prefixes this director announces.' })),
    config: Type.Object({
      path: Type.String(),
      hash: Type.String(),
      loadedAt: Iso,
      reloads: Type.Integer(),
      lastReload: Nullable(Type.Object({ at: Iso, ok: Type.Boolean(), message: Type.String(), by: Type.String(), restartNeeded: Type.Array(Type.String(), { description: 'settings this reload changed that take effect at the next restart' }) })),
    }),
  },
  { description: 'The director as it is now: VRRP instances, virtual servers, real servers, dataplane, config.' },
);

// Compile-time proof that every DirectorSnapshot fits the wire schema (tsc fails when they drift apart).
export const snapshotFitsSchema = (s: DirectorSnapshot): Static<typeof SnapshotSchema> => s;

export const UserSchema = Type.Object({ name: Type.String(), role: RoleSchema, createdAt: Iso });

export const SessionSchema = Type.Object({
  user: Type.String(),
  role: RoleSchema,
  csrfToken: Type.String({ description: 'Send it back as the x-csrf-token header on every POST/PUT/PATCH/DELETE' }),
  local: Type.Boolean({ description: 'true on the local admin socket' }),
});

export const AuditEntrySchema = Type.Object({
  id: Type.Integer(),
  at: Iso,
  who: Type.String(),
  action: Type.String(),
  target: Type.String(),
  before: Type.Unknown(),
  after: Type.Unknown(),
});

export const ConfigProblemSchema = Type.Object({
  message: Type.String(),
  line: Type.Optional(Type.Integer()),
  column: Type.Optional(Type.Integer()),
  path: Type.Optional(Type.String()),
});

export const ConfigChangeSchema = Type.Object({
  kind: Type.String(),
  change: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')]),
  name: Type.String(),
  detail: Type.Optional(Type.String()),
  restart: Type.Optional(Type.Boolean({ description: 'a setting no reload applies: it takes effect at the next restart' })),
});

const RestartNeeded = Type.Array(Type.String(), { description: 'Changed settings that take effect at the next restart only' });

export const ConfigTextSchema = Type.Object(
  { text: Type.String({ maxLength: 4 * 1024 * 1024, description: 'The whole YAML config file' }) },
  { additionalProperties: false },
);

export const ConfigCheckSchema = Type.Object({ ok: Type.Boolean(), errors: Type.Array(ConfigProblemSchema) });

export const ConfigDiffSchema = Type.Object({
  ok: Type.Boolean(),
  errors: Type.Array(ConfigProblemSchema),
  changes: Type.Array(ConfigChangeSchema),
  restartNeeded: Type.Optional(RestartNeeded),
  lines: Type.Array(Type.Object({ op: Type.Union([Type.Literal(' '), Type.Literal('+'), Type.Literal('-')]), text: Type.String() }), {
    description: 'Line diff of the running config against the candidate',
  }),
});

export const ApplyResultSchema = Type.Object({
  ok: Type.Boolean(),
  errors: Type.Array(ConfigProblemSchema),
  hash: Type.String(),
  changes: Type.Array(ConfigChangeSchema),
  restartNeeded: RestartNeeded,
});

export const RunningConfigSchema = Type.Object({ path: Type.String(), hash: Type.String(), text: Type.String(), canRollback: Type.Boolean() });

export const EventSchema = Type.Object(
  { seq: Type.Integer(), type: Type.String(), at: Iso },
  { additionalProperties: true, description: 'A director event or an audit entry (type "audit"); other fields depend on the type' },
);

export type ApiEvent = (DirectorEvent | ({ type: 'audit'; at: string } & Record<string, unknown>)) & { seq: number };

export const ClusterMemberSchema = Type.Object(
  {
    snapshot: SnapshotSchema,
    vrrpAuth: Type.Record(Type.String(), Type.String(), { description: 'Per VRRP instance: "none", or the auth type and a short salted digest of its password' }),
  },
  { description: 'This director as its peers read it (GET /api/v1/cluster/member).' },
);

const DIFFERENCE_KINDS = ['config-hash', 'instance-set', 'vrid', 'vips', 'auth', 'priority-tie', 'priority-order', 'two-masters', 'service-set', 'service', 'real-server-set', 'health'] as const;

export const ClusterSchema = Type.Object({
  name: Type.String(),
  self: Type.String({ description: 'The name of the director that answered' }),
  at: Iso,
  directors: Type.Array(Type.Object({
    name: Type.String(),
    url: Nullable(Type.String({ description: 'null for this director' })),
    reachable: Type.Boolean(),
    error: Nullable(Type.String({ description: 'Why the peer could not be read (timeout, refused, TLS, HTTP 401, …)' })),
    latencyMs: Type.Number(),
    member: Nullable(ClusterMemberSchema),
  })),
  differences: Type.Array(Type.Object({
    kind: Type.Enum(DIFFERENCE_KINDS),
    subject: Type.String({ description: 'What it is about: "config", "instance:NAME", "vrid:FAMILY:VRID", "syncGroup:NAME", "service:ID", "realServer:SERVICE/RS"' }),
    detail: Type.String(),
    directors: Type.Array(Type.String()),
  })),
});

/** The wire schema spells every kind diff.ts decides: this stops compiling the day they differ. */
const _sameKinds: [(typeof DIFFERENCE_KINDS)[number]] extends [DifferenceKind] ? ([DifferenceKind] extends [(typeof DIFFERENCE_KINDS)[number]] ? true : never) : never = true;
export const clusterFitsSchema = (v: ClusterView): Static<typeof ClusterSchema> => v;
