// Failed password attempts per account, on top of the per-address login limit: an attacker with many
// addresses (or a proxy that is not trusted) still gets at most `max` guesses at one account per window,
// at login and at the current-password check of a password change alike. Pure, with an injected clock.
//
// Unknown names are counted too, so a 429 says nothing about whether an account exists. The table is
// bounded: past `maxKeys` names, the ones whose failures have all expired go first, then unknown names —
// never a real account's count, or flooding the table with made-up names would wipe it.

export class FailedAttempts {
  /** name → failure times (oldest first) and whether it is a real account. */
  readonly #failures = new Map<string, { at: number[]; account: boolean }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
    readonly maxKeys = 10_000,
  ) {}

  /** Milliseconds until `name` may try again; 0 = now. */
  retryAfter(name: string): number {
    const f = this.#recent(name);
    if (f === undefined || f.length < this.max) return 0;
    const oldest = f[f.length - this.max] ?? this.now();
    return Math.max(1, oldest + this.windowMs - this.now());
  }

  /** Counts one failed attempt at `name`; `account` = such a user exists (its count is never evicted). */
  fail(name: string, account: boolean): void {
    const f = this.#failures.get(name) ?? { at: [], account };
    f.account ||= account;
    f.at = [...(this.#recent(name) ?? []), this.now()].slice(-this.max);
    this.#failures.set(name, f);
    if (this.#failures.size > this.maxKeys) this.#evict();
  }

  /** A right password ends the count. */
  succeed(name: string): void {
    this.#failures.delete(name);
  }

  get size(): number {
    return this.#failures.size;
  }

  #recent(name: string): number[] | undefined {
    const f = this.#failures.get(name);
    if (f === undefined) return undefined;
    const since = this.now() - this.windowMs;
    f.at = f.at.filter((t) => t > since);
    return f.at;
  }

  #evict(): void {
    const since = this.now() - this.windowMs;
    for (const [name, f] of this.#failures) if (f.at.every((t) => t <= since)) this.#failures.delete(name);
    for (const [name, f] of this.#failures) {
      if (this.#failures.size <= this.maxKeys) break;
      if (!f.account) this.#failures.delete(name);
    }
  }
}
