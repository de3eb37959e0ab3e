// Writes config/lvsd.schema.json from daemon/config/schema.ts (the one source of truth).
// Run: npx tsc -p tsconfig.json && node dist/scripts/gen-schema.js   (test/unit/config-schema.test.ts
// fails when the committed file is stale).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { jsonSchema } from '../daemon/config/schema.js';

export const SCHEMA_PATH = fileURLToPath(new URL('../../config/lvsd.schema.json', import.meta.url));

export function renderSchema(): string {
  return JSON.stringify(jsonSchema(), null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SCHEMA_PATH, renderSchema());
  console.log(`wrote ${SCHEMA_PATH}`);
}
