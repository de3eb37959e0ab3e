// A lab test whose failure carries the tail of both directors' logs: CI shows the error message, and
// without lvsd's side of the story a timing failure there cannot be explained afterwards.
import { test, type TestContext } from 'node:test';
import type { Lab } from '../../lab/lab.js';

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
