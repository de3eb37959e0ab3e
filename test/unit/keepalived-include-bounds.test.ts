// The importer's include tree, as a hostile or clumsy operator builds it: files named so they can be opened
// from where the command ran, the tree bounded in all (not only each file), and a loop through a link refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importKeepalived, importKeepalivedCommand, KeepalivedImportError } from '../../daemon/config/keepalived/index.js';
import { MAX_IMPORT_BYTES, MAX_IMPORT_FILES } from '../../daemon/config/keepalived/parser.js';
import { MAX_CONFIG_BYTES } from '../../daemon/config/errors.js';
import { MAIN, memLoader } from './keepalived-memfs.js';

function tree(t: { after: (fn: () => void) => void }, files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kinc-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

async function cli(file: string): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await importKeepalivedCommand([file], { stdout: () => undefined, stderr: (s) => (stderr += s) });
  return { code, stderr };
}

const FILES = {
  'keepalived.conf': 'global_defs {\n router_id lb1\n}\ninclude conf.d/*.conf\ninclude extra.conf\n',
  'conf.d/web.conf': 'vrrp_instance VI_1 {\n  state "MASTER\n}\n',
  'extra.conf': 'totally_unknown 1\n',
};

test('an error in an included file names it as the operator opens it: from the main file as given (relative)', async (t) => {
  const dir = tree(t, FILES);
  // as an operator in another folder would type it
  const main = path.relative(process.cwd(), path.join(dir, 'keepalived.conf'));
  assert.ok(!path.isAbsolute(main) && main.includes('/'), main);
  const r = await cli(main);
  assert.equal(r.code, 1);
  const name = path.join(path.dirname(main), 'conf.d/web.conf');
  assert.equal(r.stderr, `lvsd import-keepalived: ${name}:2:9: unterminated quoted string (missing closing ")\n`);
  assert.ok(fs.existsSync(name), 'the name opens from where the command ran');
});

test('... and absolute when the main file was given absolute; diagnostics of a file beside the main one too', async (t) => {
  const dir = tree(t, { ...FILES, 'conf.d/web.conf': '' });
  const main = path.join(dir, 'keepalived.conf');
  const r = await cli(main);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`^${path.join(dir, 'extra.conf')}:1: totally_unknown: `));
  fs.writeFileSync(path.join(dir, 'conf.d/web.conf'), FILES['conf.d/web.conf']);
  assert.equal((await cli(main)).stderr, `lvsd import-keepalived: ${path.join(dir, 'conf.d/web.conf')}:2:9: unterminated quoted string (missing closing ")\n`);
});

test('an include that climbs out of the main file\'s folder is named by its absolute path', () => {
  const r = importKeepalived('keepalived.conf', { configId: 'lb1', loader: memLoader({ [path.resolve('keepalived.conf')]: 'include /etc/other/x.conf\n', '/etc/other/x.conf': 'totally_unknown 1\n' }) });
  assert.deepEqual(r.diagnostics.map((d) => `${d.file}:${d.line}`), ['/etc/other/x.conf:1']);
});

test('a tree that reads the next file twice, 31 deep: refused at the file limit, not 2^31 reads', () => {
  const files: Record<string, string> = { [MAIN]: 'include l1.conf\ninclude l1.conf\n' };
  for (let i = 1; i < 31; i++) files[`/etc/keepalived/l${i}.conf`] = `include l${i + 1}.conf\ninclude l${i + 1}.conf\n`;
  files['/etc/keepalived/l31.conf'] = 'totally_unknown 1\n';
  assert.throws(
    () => importKeepalived(MAIN, { configId: 'lb1', loader: memLoader(files) }),
    (e: unknown) => e instanceof KeepalivedImportError && new RegExp(`^/etc/keepalived/l\\d+\\.conf:[12]:1: includes read more than ${MAX_IMPORT_FILES} files in all`).test(e.message),
  );
});

test('files each under 1 MiB included again and again: refused past the total, naming the include', () => {
  const big = `# ${'x'.repeat(MAX_CONFIG_BYTES - 10)}\n`;
  const times = Math.ceil(MAX_IMPORT_BYTES / big.length) + 1;
  const files = { [MAIN]: 'include big.conf\n'.repeat(times), '/etc/keepalived/big.conf': big };
  assert.throws(
    () => importKeepalived(MAIN, { configId: 'lb1', loader: memLoader(files) }),
    (e: unknown) => e instanceof KeepalivedImportError && /^\/etc\/keepalived\/keepalived\.conf:\d+:1: the files read reach \d+ bytes in all with \/etc\/keepalived\/big\.conf .*at most 4 MiB — not imported$/.test(e.message),
  );
  // one time fewer than the limit allows is read
  const fits = { [MAIN]: 'include big.conf\n'.repeat(Math.floor(MAX_IMPORT_BYTES / big.length) - 1), '/etc/keepalived/big.conf': big };
  assert.equal(importKeepalived(MAIN, { configId: 'lb1', loader: memLoader(fits) }).complete, true);
});

test('a loop through a link (sub -> .) is an include loop at the first turn, not 32 files deep', (t) => {
  const dir = tree(t, { 'keepalived.conf': 'include sub/*.conf\ninclude sub/*.conf\n' });
  fs.symlinkSync('.', path.join(dir, 'sub'));
  const main = path.join(dir, 'keepalived.conf');
  assert.throws(() => importKeepalived(main), (e: unknown) => e instanceof KeepalivedImportError &&
    e.message === `${main}:1:1: include loop: ${main} → ${path.join(dir, 'sub/keepalived.conf')} (${path.join(dir, 'sub/keepalived.conf')} is ${main})`);
});

test('a file included three times is named once in the YAML\'s "imported from" header, in the order first read', () => {
  const files = { [MAIN]: 'include a.conf\ninclude b.conf\ninclude a.conf\ninclude a.conf\n', '/etc/keepalived/a.conf': '# nothing\n', '/etc/keepalived/b.conf': '# nothing\n' };
  const r = importKeepalived(MAIN, { configId: 'lb1', loader: memLoader(files) });
  assert.deepEqual(r.files, [MAIN, '/etc/keepalived/a.conf', '/etc/keepalived/b.conf']);
  const header = r.yaml.split('\n').find((l) => l.includes('imported from')) ?? '';
  assert.equal(header.split('a.conf').length - 1, 1, header);
  assert.ok(header.indexOf('a.conf') < header.indexOf('b.conf'), header);
});
