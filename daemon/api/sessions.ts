// Server-side sessions: the cookie carries only a random id (signed); the role is read from the store on
// every request, so a role change or a deleted user takes effect at once. Logging out kills the id.
// What outlives a request (the live event stream) watches its session and ends with it.
//
// Sessions survive a restart of lvsd: each is kept in the state file as the sha256 of its id (the file
// never holds a token a reader could replay), its user and its clocks. The CSRF token is an HMAC of the
// id, so a restored session answers with the token its page already holds. Creation and end are saved at
// once; the idle clock only every LAST_SEEN_SAVE_MS (a request must not cost a file write), so after a
// restart a session may time out up to that much early — never late.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { SessionRecord } from '../state/schema.js';

export interface Session {
  id: string;
  user: string;
  csrfToken: string;
  createdAt: number;
  lastSeen: number;
}

/** Where sessions are kept across restarts (the state store). */
export interface SessionKeeper {
  load(): readonly SessionRecord[];
  save(records: readonly SessionRecord[]): Promise<void>;
  /** Keys the CSRF tokens; must outlive the process like the records (the cookie secret). */
  readonly secret: string;
  /** A save failed: the sessions still work, but a restart would see the previous set. */
  onError?(e: unknown): void;
}

/** The idle clock is saved at most this often. */
export const LAST_SEEN_SAVE_MS = 60_000;
/** Sessions one user may hold; a new login beyond ends that user's least recently used one. */
export const SESSIONS_PER_USER = 32;

function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export class SessionTable {
  /** By sha256 of the id. */
  readonly #records = new Map<string, SessionRecord>();
  /** By sha256 of the id. */
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #secret: string;
  #saving: Promise<void> = Promise.resolve();
  #savedAt = 0;

  constructor(
    /** Idle timeout. */
    readonly idleMs = 8 * 3600_000,
    /** Absolute lifetime. */
    readonly maxMs = 7 * 24 * 3600_000,
    private readonly now: () => number = Date.now,
    private readonly keeper: SessionKeeper | null = null,
  ) {
    this.#secret = keeper?.secret ?? randomBytes(32).toString('base64url');
    const t = this.now();
    let dropped = false;
    for (const r of keeper?.load() ?? []) {
      if (this.#expired(r, t)) dropped = true;
      else this.#records.set(r.idHash, { ...r });
    }
    this.#savedAt = t;
    if (dropped) this.#save();
  }

  create(user: string): Session {
    const t = this.now();
    const id = randomBytes(32).toString('base64url');
    const r: SessionRecord = { idHash: hashId(id), user, createdAt: t, lastSeen: t };
    this.#sweep(t);
    const mine = [...this.#records.values()].filter((x) => x.user === user).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const old of mine.slice(0, Math.max(0, mine.length - SESSIONS_PER_USER + 1))) this.#end(old.idHash);
    this.#records.set(r.idHash, r);
    this.#save();
    return this.#view(id, r);
  }

  /** The live session with this id (its idle clock restarts), or null. */
  get(id: string): Session | null {
    const r = this.#live(id);
    if (r === null) return null;
    const t = this.now();
    r.lastSeen = t;
    if (t - this.#savedAt >= LAST_SEEN_SAVE_MS) this.#save();
    return this.#view(id, r);
  }

  /** The live session with this id without counting as activity (a stream's re-check), or null. */
  peek(id: string): Session | null {
    const r = this.#live(id);
    return r === null ? null : this.#view(id, r);
  }

  delete(id: string): void {
    if (this.#end(hashId(id))) this.#save();
  }

  /** Ends every session of a user (deleted, or password changed). */
  deleteUser(user: string, except?: string): void {
    const keep = except === undefined ? null : hashId(except);
    let any = false;
    for (const [h, r] of [...this.#records]) if (r.user === user && h !== keep) any = this.#end(h) || any;
    if (any) this.#save();
  }

  /** Calls `ended` once when the session ends (logout, user deleted, password reset, expiry seen); returns the unwatch. */
  watch(id: string, ended: () => void): () => void {
    const h = hashId(id);
    let ws = this.#watchers.get(h);
    if (ws === undefined) {
      ws = new Set();
      this.#watchers.set(h, ws);
    }
    ws.add(ended);
    return () => {
      const set = this.#watchers.get(h);
      set?.delete(ended);
      if (set?.size === 0) this.#watchers.delete(h);
    };
  }

  get size(): number {
    return this.#records.size;
  }

  /** Resolves once every save asked for so far has been tried (tests, and a clean shutdown). */
  flushed(): Promise<void> {
    return this.#saving;
  }

  #live(id: string): SessionRecord | null {
    const h = hashId(id);
    const r = this.#records.get(h);
    if (r === undefined) return null;
    if (this.#expired(r, this.now())) {
      this.#end(h);
      this.#save();
      return null;
    }
    return r;
  }

  #view(id: string, r: SessionRecord): Session {
    const csrfToken = createHmac('sha256', this.#secret).update(`csrf\0${id}`).digest('base64url');
    return { id, user: r.user, csrfToken, createdAt: r.createdAt, lastSeen: r.lastSeen };
  }

  #expired(r: SessionRecord, t: number): boolean {
    return t - r.lastSeen > this.idleMs || t - r.createdAt > this.maxMs;
  }

  /** Forgets one session and tells its watchers; true if it existed. The caller saves. */
  #end(h: string): boolean {
    const existed = this.#records.delete(h);
    const ws = this.#watchers.get(h);
    if (ws !== undefined) {
      this.#watchers.delete(h);
      for (const w of ws) w();
    }
    return existed;
  }

  #sweep(t: number): void {
    for (const [h, r] of [...this.#records]) if (this.#expired(r, t)) this.#end(h);
  }

  /** Saves the whole set after the previous save (each save writes what is current when it runs). */
  #save(): void {
    const keeper = this.keeper;
    if (keeper === null) return;
    this.#savedAt = this.now();
    this.#saving = this.#saving.then(async () => {
      try {
        await keeper.save([...this.#records.values()]);
      } catch (e) {
        keeper.onError?.(e);
      }
    });
  }
}
