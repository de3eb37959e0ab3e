// keepalived.conf lexer + parser: positions, comments, quoting, nested blocks, includes with globs,
// conditional lines and parameters, and clear FILE:LINE:COL errors on malformed input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KeepalivedSyntaxError, lex, type Token } from '../../daemon/config/keepalived/lexer.js';
import { parseKeepalived, type Directive } from '../../daemon/config/keepalived/parser.js';
import { expandBraces, globFiles, type DirReader } from '../../daemon/config/keepalived/glob.js';
import { memLoader } from './keepalived-memfs.js';
import { diskLoader } from '../../daemon/config/keepalived/source.js';

const lexOpts = () => ({ configId: 'lb1', params: new Map<string, string>(), dir: '/etc/keepalived' });
const words = (tokens: Token[]) => tokens.flatMap((t) => (t.kind === 'word' ? [t.text] : []));

function parse(files: Record<string, string>, main = '/etc/keepalived/keepalived.conf', configId = 'lb1') {
  return parseKeepalived(main, memLoader(files), { configId });
}

/** Compact view of a tree: "kw arg arg { … }". */
function show(ds: Directive[]): string[] {
  return ds.map((d) => [d.keyword, ...d.args].join(' ') + (d.block ? ` { ${show(d.block).join('; ')} }` : ''));
}

test('lexer: comments with ! and # anywhere outside quotes', () => {
  const { tokens } = lex('router_id lb1 # the name\n! whole line\nscript "/bin/echo #1 !x" ! trailing', 'k.conf', lexOpts());
  assert.deepEqual(words(tokens), ['router_id', 'lb1', 'script', '/bin/echo #1 !x']);
});

test('lexer: quoted sections glue to adjacent text, as in keepalived.conf(5)', () => {
  assert.deepEqual(words(lex(`abcd" efg h jkl "mnop`, 'k', lexOpts()).tokens), ['abcd efg h jkl mnop']);
  assert.deepEqual(words(lex(`abcd "efg h jkl" mnop`, 'k', lexOpts()).tokens), ['abcd', 'efg h jkl', 'mnop']);
  assert.deepEqual(words(lex(`'single "inner"'`, 'k', lexOpts()).tokens), ['single "inner"']);
});

test('lexer: escapes inside quotes', () => {
  assert.deepEqual(words(lex(String.raw`"a\tb\x41\101\"q\\"`, 'k', lexOpts()).tokens), ['a\tbAA"q\\']);
});

test('lexer: braces are tokens even without blanks; positions are 1-based line and column', () => {
  const { tokens } = lex('vrrp_instance VI_1{\n  state MASTER}', 'k.conf', lexOpts());
  const kinds = tokens.map((t) => (t.kind === 'word' ? t.text : t.kind));
  assert.deepEqual(kinds, ['vrrp_instance', 'VI_1', 'open', 'eol', 'state', 'MASTER', 'close', 'eol']);
  const state = tokens[4];
  assert.ok(state);
  assert.deepEqual(state.pos, { file: 'k.conf', line: 2, col: 3 });
});

test('lexer: an unterminated quote is an error naming file, line and column', () => {
  assert.throws(
    () => lex('global_defs {\n  router_id "lb1\n}', '/etc/keepalived/keepalived.conf', lexOpts()),
    (e: unknown) => e instanceof KeepalivedSyntaxError && e.message === '/etc/keepalived/keepalived.conf:2:13: unterminated quoted string (missing closing ")',
  );
});

test('lexer: @ID lines are kept only on the matching director, @^ID lines everywhere else', () => {
  const text = '@lb1 priority 150\n@lb2 priority 100\n@^lb1 state BACKUP\n@^lb2 state MASTER';
  assert.deepEqual(words(lex(text, 'k', lexOpts()).tokens), ['priority', '150', 'state', 'MASTER']);
  assert.deepEqual(words(lex(text, 'k', { ...lexOpts(), configId: 'lb2' }).tokens), ['priority', '100', 'state', 'BACKUP']);
});

test('lexer: $PARAM definitions substitute ${NAME} and $NAME, recursively; undefined stay', () => {
  const text = '$BASE=10.2.${SUB}\n$SUB=0\naddr ${BASE}.100/32\nprio $PRIO\nraw ${UNDEF}x';
  const opts = lexOpts();
  opts.params.set('PRIO', '200');
  assert.deepEqual(words(lex(text, 'k', opts).tokens), ['addr', '10.2.0.100/32', 'prio', '200', 'raw', '${UNDEF}x']);
});

test('lexer: ~SEQ lines and multi-line parameters are reported, not silently dropped', () => {
  const r = lex('~SEQ(N, 1, 3) real_server 10.0.0.$N 80\n$T= \\\n  a \\\n  b\nkeep me', 'k', lexOpts());
  assert.deepEqual(words(r.tokens), ['keep', 'me']);
  assert.deepEqual(
    r.diagnostics.map((d) => `${d.pos.line}:${d.directive}`),
    ['1:~SEQ(N,', '2:$T'],
  );
});

test('parser: nested blocks, last-line brace, one-line blocks', () => {
  const r = parse({
    '/etc/keepalived/keepalived.conf': [
      'virtual_server 10.0.0.1 80 {',
      '  real_server 10.0.1.1 80 {',
      '    weight 2',
      '    HTTP_GET',
      '    {',
      '      url { path /health }',
      '    }',
      '  }',
      '}',
    ].join('\n'),
  });
  assert.deepEqual(show(r.directives), ['virtual_server 10.0.0.1 80 { real_server 10.0.1.1 80 { weight 2; HTTP_GET { url { path /health } } } }']);
  const rs = r.directives[0]?.block?.[0];
  assert.ok(rs?.block);
  assert.equal(rs.pos.line, 2);
  const path6 = rs.block[1]?.block?.[0]?.block?.[0];
  assert.equal(path6?.pos.line, 6);
});

test('parser: an unclosed block is an error with the position of the culprit; an extra } is a warning, as in keepalived', () => {
  assert.throws(() => parse({ '/etc/keepalived/keepalived.conf': 'global_defs {\n router_id x\n' }), /keepalived\.conf:1:13: block opened here is never closed/);
  const stray = parse({ '/etc/keepalived/keepalived.conf': 'router_id x\n}\nrouter_id y\n' });
  assert.deepEqual(stray.directives.map((d) => d.args[0]), ['x', 'y'], 'the file goes on after it');
  assert.deepEqual(stray.diagnostics.map((d) => [d.pos.line, d.pos.col, d.directive, d.warning]), [[2, 1, '}', true]]);
  assert.throws(() => parse({ '/etc/keepalived/keepalived.conf': '{\n}' }), /keepalived\.conf:1:1: '\{' without a keyword/);
});

test('parser: include with globs and braces, relative to the including file, sorted, spliced in place', () => {
  const r = parse({
    '/etc/keepalived/keepalived.conf': 'global_defs {\n  router_id lb1\n}\ninclude conf.d/*.conf\ninclude extra/{a,b}.inc\nvrrp_script last {\n}',
    '/etc/keepalived/conf.d/20-web.conf': 'virtual_server 10.0.0.2 80 {\n}',
    '/etc/keepalived/conf.d/10-vrrp.conf': 'vrrp_instance VI_1 {\n  include ../snippets/prio\n}',
    '/etc/keepalived/conf.d/.hidden.conf': 'bogus {\n}',
    '/etc/keepalived/conf.d/notes.txt': 'bogus {\n}',
    '/etc/keepalived/snippets/prio': 'priority 150',
    '/etc/keepalived/extra/b.inc': 'b_kw',
    '/etc/keepalived/extra/a.inc': 'a_kw',
  });
  assert.deepEqual(show(r.directives), [
    'global_defs { router_id lb1 }',
    'vrrp_instance VI_1 { priority 150 }',
    'virtual_server 10.0.0.2 80 {  }',
    'a_kw',
    'b_kw',
    'vrrp_script last {  }',
  ]);
  const prio = r.directives[1]?.block?.[0];
  assert.deepEqual(prio?.pos, { file: '/etc/keepalived/snippets/prio', line: 1, col: 1 });
  assert.equal(r.files.length, 6);
  assert.deepEqual(r.diagnostics, []);
});

test('parser: 10,000 nested blocks are an error at the first brace too deep, not a stack overflow; 64 still parse', () => {
  const nested = (n: number) => 'a {\n'.repeat(n) + '}\n'.repeat(n);
  const ok = parse({ '/etc/keepalived/keepalived.conf': nested(64) });
  let depth = 0;
  for (let d = ok.directives[0]; d !== undefined; d = d.block?.[0]) depth++;
  assert.equal(depth, 64);
  for (const n of [65, 10_000]) {
    assert.throws(() => parse({ '/etc/keepalived/keepalived.conf': nested(n) }), (e: unknown) => e instanceof KeepalivedSyntaxError && /keepalived\.conf:65:3: blocks nested deeper than 64/.test(e.message));
  }
  // the depth counts across an include: a file opened inside 60 blocks has 4 left
  const files = { '/etc/keepalived/keepalived.conf': 'a {\n'.repeat(60) + 'include deep.conf\n' + '}\n'.repeat(60), '/etc/keepalived/deep.conf': nested(5) };
  assert.throws(() => parse(files), /deep\.conf:5:3: blocks nested deeper than 64/);
});

test('parser: an include that matches nothing is reported; a loop is an error', () => {
  const r = parse({ '/etc/keepalived/keepalived.conf': 'include /nowhere/*.conf\nrouter_id x' });
  assert.deepEqual(r.diagnostics.map((d) => `${d.pos.line}: ${d.directive}: ${d.why}`), ['1: include: no file matches /nowhere/*.conf']);
  assert.throws(
    () => parse({ '/etc/keepalived/keepalived.conf': 'include a.conf', '/etc/keepalived/a.conf': 'include keepalived.conf' }),
    /a\.conf:1:1: include loop: \/etc\/keepalived\/keepalived\.conf → \/etc\/keepalived\/a\.conf → \/etc\/keepalived\/keepalived\.conf/,
  );
});

test('parser: an include whose [class] JavaScript cannot compile ([z-a]) matches no file, as glob(3) does; it is reported, not a crash', () => {
  const r = parse({ '/etc/keepalived/keepalived.conf': 'include [z-a].conf\ninclude [a-c].conf\nrouter_id x', '/etc/keepalived/b.conf': 'router_id b' });
  assert.deepEqual(r.diagnostics.map((d) => `${d.pos.line}: ${d.directive}: ${d.why}`), ['1: include: no file matches [z-a].conf']);
  assert.deepEqual(show(r.directives), ['router_id b', 'router_id x'], 'the well-formed class next to it still matches');
});

test('parser: an include whose braces multiply past 1024 patterns is an error naming it, not minutes and gigabytes', () => {
  const ten = '{a,b}'.repeat(10);
  assert.equal(expandBraces(ten).length, 1024, 'the bound itself still expands');
  const r = parse({ '/etc/keepalived/keepalived.conf': `include ${ten}.conf\n`, '/etc/keepalived/abababaaab.conf': 'router_id x' });
  assert.deepEqual(show(r.directives), ['router_id x']);
  const bomb = '{a,b}'.repeat(30);
  assert.throws(() => parse({ '/etc/keepalived/keepalived.conf': `router_id x\ninclude ${bomb}.conf\n` }), (e: unknown) => e instanceof KeepalivedSyntaxError && e.message.startsWith(`/etc/keepalived/keepalived.conf:2:1: include ${bomb}.conf: its braces expand to more than 1024 patterns`));
});

test('parser: parameters defined before an include are seen in the included file', () => {
  const r = parse({ '/etc/keepalived/keepalived.conf': '$IF=eth1\ninclude i.conf', '/etc/keepalived/i.conf': 'interface $IF' });
  assert.deepEqual(show(r.directives), ['interface eth1']);
});

test('glob: brace expansion, nested and literal', () => {
  assert.deepEqual(expandBraces('{foo/{,cat,dog},bar}'), ['foo/', 'foo/cat', 'foo/dog', 'bar']);
  assert.deepEqual(expandBraces('a{b}c'), ['a{b}c']);
  assert.deepEqual(expandBraces('no braces'), ['no braces']);
});

test('glob and include on a real directory tree', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kglob-'));
  try {
    fs.mkdirSync(path.join(dir, 'conf.d'));
    fs.writeFileSync(path.join(dir, 'keepalived.conf'), 'include conf.d/?-*.con[fF]\n');
    fs.writeFileSync(path.join(dir, 'conf.d', '2-b.conf'), 'two');
    fs.writeFileSync(path.join(dir, 'conf.d', '1-a.conF'), 'one');
    fs.writeFileSync(path.join(dir, 'conf.d', '10-c.conf'), 'skipped');
    const r = parseKeepalived(path.join(dir, 'keepalived.conf'), diskLoader, { configId: 'x' });
    assert.deepEqual(show(r.directives), ['one', 'two']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('glob: * ? [class] [!class] per name, a dot file only by a dot, no backtracking blow-up on many stars', { timeout: 30_000 }, () => {
  const names = ['a.conf', 'ab.conf', 'b.conf', '.hidden.conf', 'x]y.conf', 'a'.repeat(60), `${'a'.repeat(59)}b`];
  const dirs: DirReader = { list: () => names, isFile: () => true };
  const base = (p: string): string[] => globFiles(`/d/${p}`, dirs).map((f) => path.basename(f));
  assert.deepEqual(base('*.conf'), ['a.conf', 'ab.conf', 'b.conf', 'x]y.conf']);
  assert.deepEqual(base('?.conf'), ['a.conf', 'b.conf']);
  assert.deepEqual(base('[a-b].conf'), ['a.conf', 'b.conf']);
  assert.deepEqual(base('[!a].conf'), ['b.conf']);
  assert.deepEqual(base('.*'), ['.hidden.conf']);
  assert.deepEqual(base('a*b*'), [`${'a'.repeat(59)}b`, 'ab.conf']);
  assert.deepEqual(base('*[]]*'), ['x]y.conf']);
  assert.deepEqual(base('[!]a.]*'), ['b.conf', 'x]y.conf']);
  // as one RegExp this backtracked for minutes against the 60 a's
  assert.deepEqual(base(`${'*a'.repeat(14)}*b`), [`${'a'.repeat(59)}b`]);
});

test('parser: an unreadable main file is an error naming it', () => {
  assert.throws(() => parse({}, '/etc/keepalived/missing.conf'), /\/etc\/keepalived\/missing\.conf:0:0: cannot read: ENOENT/);
});
