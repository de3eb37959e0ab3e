// The state store: operator overrides, users and the audit log, in one lowdb JSON file.
// Every change is one write that carries its audit entry too, so the two never disagree.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import { CheckedJsonFile, StateFileError } from './file-adapter.js';
import { hashPassword, passwordProblem, verifyPassword } from './password.js';
import { STATE_VERSION, ROLES, type AuditEntry, type Override, type Role, type SessionRecord, type State, type StoredBgpWithdraw, type StoredOverride, type User } from './schema.js';
import { targetKey, type OverrideTarget } from './target-key.js';

export { StateFileError } from './file-adapter.js';
export type { AuditEntry, Role, SessionRecord, StoredBgpWithdraw, StoredOverride, User } from './schema.js';

export const DEFAULT_STATE_FILE = '/var/lib/lvsd/state.json';
/** The audit log keeps this many newest entries. */
export const AUDIT_LIMIT = 10_000;

export interface OpenOptions {
  /** Start from an empty state when the file is corrupt or wrong-shaped; the bad file is moved aside. */
  startEmpty?: boolean;
  now?: () => Date;
  /** scrypt N for new password hashes (default 16384). Tests lower it to stay fast. */
  passwordCost?: number;
}

export interface OpenResult {
  store: StateStore;
  /** Where a bad file was moved when startEmpty was used. */
  movedAside: string | null;
  /** True when the file did not exist and was created. */
  created: boolean;
}

/** A request the store refuses (unknown user, duplicate name, bad password): the API maps it to 4xx. */
export class StoreError extends Error {
  constructor(
    readonly code: 'not-found' | 'conflict' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

function emptyState(): State {
  return {
    version: STATE_VERSION,
    overrides: [],
    users: [],
    audit: [],
    bootstrapTokenHash: null,
    cookieSecret: randomBytes(32).toString('base64url'),
  };
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function clean(o: Override): Override {
  const out: Override = {};
  if (o.drain === true) out.drain = true;
  if (o.maintenance === true) out.maintenance = true;
  if (o.weight !== undefined) out.weight = o.weight;
  return out;
}

function isEmpty(o: Override): boolean {
  return o.drain !== true && o.maintenance !== true && o.weight === undefined;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens (or creates) the state file. A corrupt or wrong-shaped file throws StateFileError naming the file
 * and the problem and is left untouched — unless `startEmpty`, which moves it to `FILE.bad-<time>` first.
 */
export async function openStore(file: string, opts: OpenOptions = {}): Promise<OpenResult> {
  const now = opts.now ?? (() => new Date());
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const adapter = new CheckedJsonFile(file);
  const db = new Low<State>(adapter, emptyState());
  let movedAside: string | null = null;
  let created = false;
  try {
    await db.read();
    if (!(await exists(file))) {
      created = true;
      await db.write();
    }
  } catch (e) {
    if (!(e instanceof StateFileError) || opts.startEmpty !== true) {
      if (e instanceof StateFileError) {
        throw new StateFileError(
          e.file,
          `${e.problem} — the file was left as it is; fix it, or start with an empty state (lvsd run --state-from-empty) which moves it aside`,
          e.at,
        );
      }
      throw e;
    }
    movedAside = `${file}.bad-${now().toISOString().replace(/[:.]/g, '-')}`;
    await rename(file, movedAside);
    db.data = emptyState();
    await db.write();
    created = true;
  }
  return { store: new StateStore(db, now, file, opts.passwordCost), movedAside, created };
}

export class StateStore {
  constructor(
    private readonly db: Low<State>,
    private readonly now: () => Date,
    /** The state file's path. */
    readonly file: string,
    private readonly passwordCost?: number,
  ) {}

  get cookieSecret(): string {
    return this.db.data.cookieSecret;
  }

  #lock: Promise<unknown> = Promise.resolve();

  /**
   * Applies `change` to a copy, appends the audit entry, writes; memory changes only once the file did.
   * One change at a time, so a failed write can never take a concurrent change down with it.
   */
  #commit(who: string, action: string, target: string, change: (s: State) => { before: unknown; after: unknown } | null): Promise<AuditEntry | null> {
    const run = this.#lock.then(() => this.#commitNow(who, action, target, change));
    this.#lock = run.catch(() => undefined);
    return run;
  }

  async #commitNow(who: string, action: string, target: string, change: (s: State) => { before: unknown; after: unknown } | null): Promise<AuditEntry | null> {
    const next = structuredClone(this.db.data);
    const diff = change(next);
    if (diff === null) {
      // a change that touches no audited object (e.g. bootstrap token)
      await this.#write(next);
      return null;
    }
    const last = next.audit.at(-1);
    const entry: AuditEntry = { id: (last?.id ?? 0) + 1, at: this.now().toISOString(), who, action, target, before: diff.before, after: diff.after };
    next.audit.push(entry);
    if (next.audit.length > AUDIT_LIMIT) next.audit.splice(0, next.audit.length - AUDIT_LIMIT);
    await this.#write(next);
    return entry;
  }

  async #write(next: State): Promise<void> {
    const prev = this.db.data;
    this.db.data = next;
    try {
      await this.db.write();
    } catch (e) {
      this.db.data = prev;
      throw e;
    }
  }

  // ---- overrides ----

  overrides(): readonly StoredOverride[] {
    return this.db.data.overrides;
  }

  /** Keyed as the director's desired() wants them: service id or `${service}/${realServer}`. */
  overrideMap(): Map<string, Override> {
    return new Map(this.db.data.overrides.map((o) => [targetKey(o), o.override]));
  }

  getOverride(target: OverrideTarget): Override | null {
    const key = targetKey(target);
    return this.db.data.overrides.find((o) => targetKey(o) === key)?.override ?? null;
  }

  /** Sets (or, with an empty or null override, clears) the override of a target. */
  async setOverride(target: OverrideTarget, override: Override | null, who: string, action = 'override.set'): Promise<AuditEntry | null> {
    const key = targetKey(target);
    const wanted = override === null ? null : clean(override);
    return this.#commit(who, action, key, (s) => {
      const i = s.overrides.findIndex((o) => targetKey(o) === key);
      const before = i >= 0 ? (s.overrides[i]?.override ?? null) : null;
      if (i >= 0) s.overrides.splice(i, 1);
      let after: Override | null = null;
      if (wanted !== null && !isEmpty(wanted)) {
        const stored: StoredOverride = { service: target.service, override: wanted, by: who, at: this.now().toISOString() };
        if (target.realServer !== undefined) stored.realServer = target.realServer;
        s.overrides.push(stored);
        after = wanted;
      }
      return { before, after };
    });
  }

  // ---- audit ----

  /** Records a change made elsewhere (config apply, failover) with its before and after. */
  async audit(who: string, action: string, target: string, before: unknown, after: unknown): Promise<AuditEntry | null> {
    return this.#commit(who, action, target, () => ({ before, after }));
  }

  auditLog(filter: { who?: string; action?: string; since?: string; limit?: number } = {}): AuditEntry[] {
    let out = this.db.data.audit;
    if (filter.who !== undefined) out = out.filter((e) => e.who === filter.who);
    if (filter.action !== undefined) {
      const a = filter.action;
      out = out.filter((e) => e.action === a || e.action.startsWith(a + '.'));
    }
    if (filter.since !== undefined) {
      const since = filter.since;
      out = out.filter((e) => e.at >= since);
    }
    return out.slice(-(filter.limit ?? 200)).reverse();
  }

  // ---- users ----

  users(): readonly User[] {
    return this.db.data.users;
  }

  getUser(name: string): User | undefined {
    return this.db.data.users.find((u) => u.name === name);
  }

  hasAdmin(): boolean {
    return this.db.data.users.some((u) => u.role === 'admin');
  }

  /** The user when name and password match, else null (same work either way, against timing probes). */
  async authenticate(name: string, password: string): Promise<User | null> {
    const user = this.getUser(name);
    const ok = await verifyPassword(password, user?.hash ?? DUMMY_HASH);
    return ok && user !== undefined ? user : null;
  }

  async addUser(name: string, password: string, role: Role, who: string): Promise<User> {
    checkName(name);
    checkRole(role);
    checkPassword(password);
    if (this.getUser(name) !== undefined) throw new StoreError('conflict', `user "${name}" already exists`);
    const user: User = { name, hash: await hashPassword(password, this.passwordCost), role, createdAt: this.now().toISOString() };
    await this.#commit(who, 'user.add', name, (s) => {
      // again in the queue: the same name may have been added while the password was hashed
      if (s.users.some((u) => u.name === name)) throw new StoreError('conflict', `user "${name}" already exists`);
      s.users.push(user);
      if (role === 'admin') s.bootstrapTokenHash = null;
      return { before: null, after: { name, role } };
    });
    return user;
  }

  async setRole(name: string, role: Role, who: string): Promise<void> {
    checkRole(role);
    this.#mustGet(name);
    await this.#commit(who, 'user.role', name, (s) => {
      const u = mustFind(s, name);
      const before = u.role;
      if (before === 'admin' && role !== 'admin') keepOneAdmin(s, name);
      u.role = role;
      return { before: { role: before }, after: { role } };
    });
  }

  async setPassword(name: string, password: string, who: string): Promise<void> {
    this.#mustGet(name);
    checkPassword(password);
    const hash = await hashPassword(password, this.passwordCost);
    await this.#commit(who, 'user.password', name, (s) => {
      mustFind(s, name).hash = hash;
      return { before: null, after: '(password changed)' };
    });
  }

  async deleteUser(name: string, who: string): Promise<void> {
    this.#mustGet(name);
    await this.#commit(who, 'user.delete', name, (s) => {
      const user = mustFind(s, name);
      if (user.role === 'admin') keepOneAdmin(s, name);
      s.users = s.users.filter((u) => u.name !== name);
      return { before: { name, role: user.role }, after: null };
    });
  }

  #mustGet(name: string): User {
    const u = this.getUser(name);
    if (u === undefined) throw new StoreError('not-found', `no user "${name}"`);
    return u;
  }

  // ---- browser sessions (the API's SessionTable keeps them here) ----

  sessionRecords(): readonly SessionRecord[] {
    return this.db.data.sessions ?? [];
  }

  /** Replaces the kept sessions; not audited (a login is logged, and a session is no setting). */
  async saveSessions(records: readonly SessionRecord[]): Promise<void> {
    const copy = records.map((r) => ({ ...r }));
    await this.#commit('lvsd', 'sessions', '', (s) => {
      s.sessions = copy;
      return null;
    });
  }

  // ---- BGP withdrawals (the BGP supervisor keeps them here, so a restart does not re-announce) ----

  bgpWithdrawn(): readonly StoredBgpWithdraw[] {
    return this.db.data.bgpWithdrawn ?? [];
  }

  /**
   * Replaces the kept withdrawals. Not audited here: the API audits the operator's bgp.withdraw / bgp.restore
   * with what BIRD then runs, which is known only after this write.
   */
  async saveBgpWithdrawn(list: readonly StoredBgpWithdraw[]): Promise<void> {
    const copy = list.map((w) => ({ ...w }));
    await this.#commit('lvsd', 'bgp.withdrawn', '', (s) => {
      if (copy.length === 0) delete s.bgpWithdrawn;
      else s.bgpWithdrawn = copy;
      return null;
    });
  }

  // ---- first admin ----

  /**
   * While no admin exists, makes a one-time bootstrap token (printed once at start) and stores only its
   * hash. Returns null when an admin already exists.
   */
  async issueBootstrapToken(): Promise<string | null> {
    if (this.hasAdmin()) return null;
    const token = randomBytes(24).toString('base64url');
    await this.#commit('lvsd', 'bootstrap', '', (s) => {
      s.bootstrapTokenHash = sha256(token);
      return null;
    });
    return token;
  }

  /** Creates the first admin with the bootstrap token; the token dies with its first use. */
  async redeemBootstrapToken(token: string, name: string, password: string): Promise<User> {
    const h = this.db.data.bootstrapTokenHash;
    if (h === null || this.hasAdmin() || sha256(token) !== h) throw new StoreError('invalid', 'bootstrap token is not valid (already used, or an admin exists)');
    return this.addUser(name, password, 'admin', `bootstrap:${name}`);
  }
}

// Verifying against this keeps an unknown user's login as slow as a wrong password.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

// Checked inside a commit, on the state it changes: a check made before the queue could be stale by the
// time the change runs (two admins demoting each other at once would leave none).
function mustFind(s: State, name: string): User {
  const u = s.users.find((x) => x.name === name);
  if (u === undefined) throw new StoreError('not-found', `no user "${name}"`);
  return u;
}

function keepOneAdmin(s: State, name: string): void {
  if (!s.users.some((u) => u.role === 'admin' && u.name !== name)) {
    throw new StoreError('conflict', `"${name}" is the last admin; make another admin first`);
  }
}

/** What a user name may be (also what a peer director may name as the user of a forwarded action). */
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

function checkName(name: string): void {
  if (!USER_NAME.test(name)) {
    throw new StoreError('invalid', `user name "${name}" must be 1–64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit`);
  }
}

function checkRole(role: string): void {
  if (!(ROLES as readonly string[]).includes(role)) throw new StoreError('invalid', `role "${role}" must be one of ${ROLES.join(', ')}`);
}

function checkPassword(password: string): void {
  const p = passwordProblem(password);
  if (p !== null) throw new StoreError('invalid', p);
}

/** For the CLI (`lvsd user add NAME --role admin`): adds a user to the state file, audited as "cli". */
export async function addUser(store: StateStore, name: string, password: string, role: Role): Promise<User> {
  return store.addUser(name, password, role, 'cli');
}
