// Which kernel IPVS services lvsd owns: recorded beside the state file so a restart adopts its own entries
// and leaves everything else in the table (another tool's, an operator's) alone.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where lvsd records which kernel services it owns, so a restart adopts them and leaves others alone. */
export interface OwnershipStore {
  load(): Set<string>;
  save(ids: ReadonlySet<string>): void;
}

/** JSON file `{ "services": [...] }`, written to a temp file then renamed. */
export function fileOwnership(path: string): OwnershipStore {
  return {
    load: () => {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
        throw e;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new Error(`${path}: not JSON: ${(e as Error).message}`);
      }
      const services = (parsed as { services?: unknown }).services;
      if (!Array.isArray(services) || !services.every((s) => typeof s === 'string')) throw new Error(`${path}: expected { "services": [string, ...] }`);
      return new Set(services);
    },
    save: (ids) => {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(`${path}.tmp`, JSON.stringify({ services: [...ids].sort() }, null, 1) + '\n');
      renameSync(`${path}.tmp`, path);
    },
  };
}

export function memoryOwnership(initial: Iterable<string> = []): OwnershipStore & { ids: Set<string> } {
  const store = {
    ids: new Set(initial),
    load: () => new Set(store.ids),
    save: (ids: ReadonlySet<string>) => {
      store.ids = new Set(ids);
    },
  };
  return store;
}
