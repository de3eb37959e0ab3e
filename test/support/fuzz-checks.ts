// What the fuzz harness (test/fuzz/) and its regression corpus (test/fixtures/fuzz/) check of each
// input: the properties that must hold whatever the text is.
import assert from 'node:assert/strict';
import { KeepalivedImportError } from '../../daemon/config/keepalived/index.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError, MAX_ERRORS, MAX_MESSAGE } from '../../daemon/config/errors.js';
import { importText } from '../unit/keepalived-memfs.js';
import { RAW_CONTROL } from './fuzz-text.js';

/** The YAML loader returns a Config or placed errors — never throws — and its errors are bounded and escaped. */
export function checkYaml(text: string): void {
  const r = loadConfigText(text, 'f.yaml');
  if (r.ok) return;
  assert.ok(r.errors.length >= 1 && r.errors.length <= MAX_ERRORS + 1, `${String(r.errors.length)} errors`);
  for (const e of r.errors) {
    assert.ok(Number.isInteger(e.line) && e.line >= 1 && Number.isInteger(e.col) && e.col >= 1, JSON.stringify(e));
    assert.ok(e.message.length > 0 && e.message.length <= MAX_MESSAGE, `message of ${String(e.message.length)} characters`);
    assert.doesNotMatch(formatError(e), RAW_CONTROL, 'a raw control character in an error line');
  }
}

/**
 * The keepalived importer imports (and the YAML it prints loads without a throw) or refuses with a
 * KeepalivedImportError naming the place — never any other error.
 */
export function checkKeepalived(text: string): void {
  let yaml: string;
  try {
    yaml = importText(text).yaml;
  } catch (e) {
    if (e instanceof KeepalivedImportError) {
      assert.match(e.message, /^\S+(:\d+:\d+)?: /, 'names the place');
      return;
    }
    throw e;
  }
  loadConfigText(yaml, 'imported.yaml');
}
