// docs/migration.md shows a keepalived.conf and "what the importer prints for it": keep that true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importKeepalived } from '../../daemon/config/keepalived/index.js';
import { MAIN, memLoader } from './keepalived-memfs.js';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/migration.md');

function fenced(md: string, lang: string, after: string): string {
  const from = md.indexOf(after);
  assert.ok(from >= 0, `docs/migration.md has "${after}"`);
  const open = md.indexOf(`\n\`\`\`${lang}\n`, from);
  assert.ok(open >= 0, `a \`\`\`${lang} block after "${after}"`);
  const start = open + lang.length + 5;
  return md.slice(start, md.indexOf('\n```\n', start) + 1);
}

test('the import example in docs/migration.md is the importer\'s real output', () => {
  const md = fs.readFileSync(DOC, 'utf8');
  const conf = fenced(md, 'text', 'For example, this keepalived.conf:');
  const yaml = fenced(md, 'yaml', 'imports (exit status 2');
  // the docs run `lvsd import-keepalived /etc/keepalived/keepalived.conf`
  const r = importKeepalived(MAIN, { configId: 'lb1', loader: memLoader({ [MAIN]: conf }) });
  assert.equal(r.yaml, yaml);
  assert.equal(r.diagnostics.length, 1, 'the text says: exit status 2, one line on stderr');
});
