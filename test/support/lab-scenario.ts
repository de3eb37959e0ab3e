// A lab test whose failure carries the tail of both directors' logs: CI shows the error message, and
// without lvsd's side of the story a timing failure there cannot be explained afterwards. Also the few
// helpers every lab scenario file uses: polling, VIP holders, a traffic window and its verdict.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Lab, TrafficStats } from '../../lab/lab.js';

export function labScenario(lab: () => Lab): (name: string, fn: (t: TestContext) => Promise<void>) => void {
  return (name, fn) => {
    test(name, async (t) => {
      try {
        await fn(t);
      } catch (e) {
        if (e instanceof Error) e.message += `\n${lab().logTails()}`;
        throw e;
      }
    });
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 50 ms; resolves with how long it took, rejects after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** The helpers bound to a file's lab. */
export function labTraffic(lab: () => Lab): {
  /** A check for until(): exactly these directors hold the VIP. */
  holders: (want: string[]) => () => Promise<boolean>;
  /** Runs `action` under continuous client traffic (0.8 s before it, `settleMs` after) and reports. */
  withTraffic: (t: TestContext, action: () => Promise<void>, settleMs?: number) => Promise<TrafficStats>;
  noFailures: (stats: TrafficStats, what?: string) => void;
} {
  return {
    holders: (want) => async () => JSON.stringify(await lab().vipHolders()) === JSON.stringify(want),
    withTraffic: async (t, action, settleMs = 1500) => {
      const traffic = lab().traffic(4);
      await sleep(800);
      await action();
      await sleep(settleMs);
      const stats = await traffic.stop();
      t.diagnostic(`sent ${stats.sent}, failed ${stats.failed}, longest gap ${stats.longestGapMs} ms, by server ${JSON.stringify(stats.byServer)}, errors ${JSON.stringify(stats.errors)}`);
      assert.ok(stats.ok > 0, 'traffic flowed');
      return stats;
    },
    noFailures: (stats, what = 'failed requests') => {
      assert.equal(stats.failed, 0, `${what}: ${stats.failed} of ${stats.sent} failed: ${JSON.stringify(stats.failures)}`);
    },
  };
}
