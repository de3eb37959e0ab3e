// Server-side sessions: the cookie carries only a random id (signed); the role is read from the store on
// every request, so a role change or a deleted user takes effect at once. Logging out kills the id.
// What outlives a request (the live event stream) watches its session and ends with it.
import { randomBytes } from 'node:crypto';

export interface Session {
  id: string;
  user: string;
  csrfToken: string;
  createdAt: number;
  lastSeen: number;
}

export class SessionTable {
  readonly #sessions = new Map<string, Session>();
  readonly #watchers = new Map<string, Set<() => void>>();

  constructor(
    /** Idle timeout. */
    readonly idleMs = 8 * 3600_000,
    /** Absolute lifetime. */
    readonly maxMs = 7 * 24 * 3600_000,
    private readonly now: () => number = Date.now,
  ) {}

  create(user: string): Session {
    const t = this.now();
    const s: Session = { id: randomBytes(32).toString('base64url'), user, csrfToken: randomBytes(32).toString('base64url'), createdAt: t, lastSeen: t };
    this.#sessions.set(s.id, s);
    this.#sweep(t);
    return s;
  }

  /** The live session with this id (its idle clock restarts), or null. */
  get(id: string): Session | null {
    const s = this.peek(id);
    if (s !== null) s.lastSeen = this.now();
    return s;
  }

  /** The live session with this id without counting as activity (a stream's re-check), or null. */
  peek(id: string): Session | null {
    const s = this.#sessions.get(id);
    if (s === undefined) return null;
    const t = this.now();
    if (t - s.lastSeen > this.idleMs || t - s.createdAt > this.maxMs) {
      this.delete(id);
      return null;
    }
    return s;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
    const ws = this.#watchers.get(id);
    if (ws === undefined) return;
    this.#watchers.delete(id);
    for (const w of ws) w();
  }

  /** Ends every session of a user (deleted, or password changed). */
  deleteUser(user: string, except?: string): void {
    for (const [id, s] of this.#sessions) if (s.user === user && id !== except) this.delete(id);
  }

  /** Calls `ended` once when the session ends (logout, user deleted, password reset, expiry seen); returns the unwatch. */
  watch(id: string, ended: () => void): () => void {
    let ws = this.#watchers.get(id);
    if (ws === undefined) {
      ws = new Set();
      this.#watchers.set(id, ws);
    }
    ws.add(ended);
    return () => {
      const set = this.#watchers.get(id);
      set?.delete(ended);
      if (set?.size === 0) this.#watchers.delete(id);
    };
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(t: number): void {
    for (const [id, s] of this.#sessions) if (t - s.lastSeen > this.idleMs || t - s.createdAt > this.maxMs) this.delete(id);
  }
}
