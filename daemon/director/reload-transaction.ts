// A reload as a transaction over the director's parts: adopt the new config, apply it part by part
// (health checks, VRRP, dataplane, in that order), and if a part fails, adopt the previous config again
// and re-apply it to every part of the reload, newest first, so the director keeps serving with its last
// good state. Every part, not only those reached: the failed one may have applied half, and a part not
// reached yet may have moved anyway (a health event mid-reload runs a dataplane pass with the new
// config). Each part is a reconcile, so putting an untouched one back changes nothing. The parts themselves are injected, so
// the order, the rollback and the report are tested with fakes (test/unit/director-reload.test.ts).
import type { ReloadPart } from './reload-parts.js';

export interface PartFailure {
  part: ReloadPart;
  error: string;
}

export type ReloadOutcome =
  | { ok: true; applied: ReloadPart[] }
  | {
      ok: false;
      /** Parts that applied the new config before the failure. */
      applied: ReloadPart[];
      failed: PartFailure;
      /** Parts put back on the previous config: every part of the reload, reached or not. */
      rolledBack: ReloadPart[];
      /** Parts whose rollback failed too: their state is neither config's for sure. */
      rollbackFailures: PartFailure[];
    };

export interface ReloadActions<C> {
  /** Makes `config` the one everything else reads (the desired table, the snapshot). */
  adopt(config: C): void;
  /** Brings one part in line with `config`; throws with the reason when it cannot. */
  apply(part: ReloadPart, config: C): Promise<void>;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export async function runReload<C>(parts: readonly ReloadPart[], from: C, to: C, actions: ReloadActions<C>): Promise<ReloadOutcome> {
  const applied: ReloadPart[] = [];
  actions.adopt(to);
  let failed: PartFailure | null = null;
  for (const part of parts) {
    try {
      await actions.apply(part, to);
      applied.push(part);
    } catch (e) {
      failed = { part, error: message(e) };
      break;
    }
  }
  if (failed === null) return { ok: true, applied };

  actions.adopt(from);
  const rolledBack: ReloadPart[] = [];
  const rollbackFailures: PartFailure[] = [];
  for (const part of [...parts].reverse()) {
    try {
      await actions.apply(part, from);
      rolledBack.push(part);
    } catch (e) {
      rollbackFailures.push({ part, error: message(e) });
    }
  }
  return { ok: false, applied, failed, rolledBack, rollbackFailures };
}

/** One line for the log, the API and the snapshot's lastReload; `restartNeeded`: settings that wait for a restart. */
export function describeOutcome(outcome: ReloadOutcome, changes: readonly string[], restartNeeded: readonly string[] = []): string {
  const waits = restartNeeded.length === 0 ? '' : `; takes effect at the next restart: ${restartNeeded.join(', ')}`;
  if (outcome.ok) return (changes.length === 0 ? 'no changes' : changes.join('; ')) + waits;
  const { failed, rolledBack, rollbackFailures } = outcome;
  const head = `reload failed at ${failed.part}: ${failed.error}`;
  const back = rolledBack.length > 0 ? `; rolled back ${rolledBack.join(', ')}` : '';
  if (rollbackFailures.length === 0) return `${head}${back}; running the previous config`;
  const broken = rollbackFailures.map((f) => `${f.part} (${f.error})`).join(', ');
  return `${head}${back}; rollback FAILED for ${broken}: those parts may hold a mix of both configs — fix the cause and reload`;
}

/** What the API answers about a failed reload (the port's ReloadFailure). */
export function failureOf(outcome: Extract<ReloadOutcome, { ok: false }>): { part: ReloadPart; error: string; rolledBack: ReloadPart[]; rollbackFailures: string[] } {
  return { part: outcome.failed.part, error: outcome.failed.error, rolledBack: outcome.rolledBack, rollbackFailures: outcome.rollbackFailures.map((f) => `${f.part}: ${f.error}`) };
}

/** A reload refused before any part ran: the file does not validate (the first three errors, and how many more). */
export function describeRefusal(errors: readonly string[]): string {
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : '';
  return `refused: config is invalid (${errors.length} error${errors.length === 1 ? '' : 's'}): ${errors.slice(0, 3).join('; ')}${more}`;
}
