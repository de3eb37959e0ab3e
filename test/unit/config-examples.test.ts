// Every example config in config/ and every ```yaml block in docs/ passes check-config: the
// same loader in process (cli-bin.test.ts runs the compiled bin on config/lvsd.yaml), and no
// warnings either, so examples stay exemplary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function walk(dir: string, ext: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p, ext) : name.endsWith(ext) ? [p] : [];
  });
}

const examples = walk(join(ROOT, 'config'), '.yaml');

test('config/ has the example set', () => {
  const names = examples.map((p) => relative(ROOT, p));
  for (const n of ['config/lvsd.yaml', 'config/examples/dr-farm.yaml', 'config/examples/fwmark.yaml', 'config/examples/vrrp-v2-auth.yaml', 'config/examples/unicast.yaml'])
    assert.ok(names.includes(n), `${n} missing`);
});

for (const file of examples) {
  test(`check-config ${relative(ROOT, file)}`, () => {
    const r = loadConfigText(readFileSync(file, 'utf8'), file);
    assert.ok(r.ok, r.ok ? '' : r.errors.map(formatError).join('\n'));
    assert.deepEqual(r.warnings.map(formatError), []);
  });
}

/** ```yaml fenced blocks with the line they start on. */
function yamlBlocks(md: string): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ya?ml\s*$/.test(lines[i] ?? '')) continue;
    const start = i + 1;
    let j = start;
    while (j < lines.length && !/^```\s*$/.test(lines[j] ?? '')) j++;
    blocks.push({ line: start + 1, text: lines.slice(start, j).join('\n') });
    i = j;
  }
  return blocks;
}

const docs = walk(join(ROOT, 'docs'), '.md');

test('docs/ has yaml examples to check', () => {
  assert.ok(docs.flatMap((d) => yamlBlocks(readFileSync(d, 'utf8'))).length >= 1);
});

for (const doc of docs) {
  for (const block of yamlBlocks(readFileSync(doc, 'utf8'))) {
    const where = `${relative(ROOT, doc)}:${block.line}`;
    test(`yaml example at ${where} is a valid config`, () => {
      const r = loadConfigText(block.text, where);
      assert.ok(r.ok, r.ok ? '' : r.errors.map(formatError).join('\n'));
      assert.deepEqual(r.warnings.map(formatError), []);
    });
  }
}

test('yamlBlocks finds fenced yaml and where it starts', () => {
  assert.deepEqual(yamlBlocks('text\n```yaml\na: 1\n```\n```yml\nb: 2\n```\n```text\nno\n```'), [
    { line: 3, text: 'a: 1' },
    { line: 6, text: 'b: 2' },
  ]);
});
