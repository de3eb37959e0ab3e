// Server-side sessions: the cookie carries only a random id (signed); the role is read from the store on
// every request, so a role change or a deleted user takes effect at once. Logging out kills the id.
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

  get(id: string): Session | null {
    const s = this.#sessions.get(id);
    if (s === undefined) return null;
    const t = this.now();
    if (t - s.lastSeen > this.idleMs || t - s.createdAt > this.maxMs) {
      this.#sessions.delete(id);
      return null;
    }
    s.lastSeen = t;
    return s;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  /** Ends every session of a user (deleted, or password changed). */
  deleteUser(user: string, except?: string): void {
    for (const [id, s] of this.#sessions) if (s.user === user && id !== except) this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(t: number): void {
    for (const [id, s] of this.#sessions) if (t - s.lastSeen > this.idleMs || t - s.createdAt > this.maxMs) this.#sessions.delete(id);
  }
}
