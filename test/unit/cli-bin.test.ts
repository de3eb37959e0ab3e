// Spawns the compiled `lvsd` bin as an operator would: exit codes, stdout/stderr, signals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../daemon/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = join(ROOT, 'config/lvsd.yaml');

function lvsd(...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });
}

test('the bin starts with a node shebang (package.json "bin" runs it directly)', () => {
  assert.match(readFileSync(BIN, 'utf8'), /^#!\/usr\/bin\/env node\n/);
});

test('lvsd version prints the package version', () => {
  const r = lvsd('version');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(r.status, 0);
  assert.equal(r.stdout.trim().split(' ')[1], pkg.version);
  assert.match(r.stdout, /^lvsd \S+ \(node v\d+/);
});

test('lvsd with no command prints usage and exits 2; an unknown command too', () => {
  const none = lvsd();
  assert.equal(none.status, 2);
  assert.match(none.stderr, /usage: lvsd <command>/);
  const bad = lvsd('frobnicate');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command "frobnicate"/);
});

test('check-config: the example is valid (exit 0, summary on stdout, nothing on stderr)', () => {
  const r = lvsd('check-config', EXAMPLE);
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /lvsd\.yaml: ok \(2 VRRP instances, 1 virtual server, 3 real servers\)/);
});

test('check-config: a broken file exits 1 with FILE:LINE:COL: path: message lines on stderr', () => {
  const f = fileURLToPath(new URL('../../../test/fixtures/config/many-errors.yaml', import.meta.url));
  const r = lvsd('check-config', f);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  const expected = readFileSync(f.replace(/\.yaml$/, '.expected'), 'utf8').trimEnd().split('\n').map((l) => l.replace('many-errors.yaml', f));
  assert.deepEqual(lines.slice(0, -1), expected);
  assert.equal(lines.at(-1), `${f}: ${expected.length} errors`);
});

test('check-config: a missing file exits 1 naming it; a missing argument exits 2', () => {
  const r = lvsd('check-config', '/nonexistent/lvsd.yaml');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^\/nonexistent\/lvsd\.yaml:1:1: cannot read: ENOENT/);
  assert.equal(lvsd('check-config').status, 2);
});

interface LogLine { level: string; msg: string; [k: string]: unknown }

/** Runs `lvsd run`, collecting its JSON log lines; waitFor resolves when a line matches. */
function startRun(args: string[]): { child: ChildProcess; lines: LogLine[]; waitFor: (re: RegExp, timeoutMs?: number) => Promise<LogLine>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { env: { ...process.env, LVSD_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LogLine[] = [];
  const waiters: { re: RegExp; resolve: (l: LogLine) => void }[] = [];
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, nl)) as LogLine;
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) if (w.re.test(line.msg)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(line); }
    }
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => { r(code); }));
  const waitFor = (re: RegExp, timeoutMs = 15_000) => {
    const found = lines.find((l) => re.test(l.msg));
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      const t = setTimeout(() => { reject(new Error(`no log line matching ${String(re)}; got:\n${lines.map((l) => l.msg).join('\n')}`)); }, timeoutMs);
      waiters.push({ re, resolve: (l) => { clearTimeout(t); resolve(l); } });
    });
  };
  return { child, lines, waitFor, exit };
}

test('run: starts, reports capabilities, SIGHUP with a bad config keeps the old one, a good one applies the diff, SIGTERM exits 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-run-'));
  const cfg = join(dir, 'lvsd.yaml');
  copyFileSync(EXAMPLE, cfg);
  const run = startRun(['--config', cfg, '--state', join(dir, 'state.json')]);
  try {
    const starting = await run.waitFor(/^starting$/);
    assert.equal(starting.stateFile, join(dir, 'state.json'));
    await run.waitFor(/^running$/);
    assert.ok(run.lines.some((l) => /^IPVS: /.test(l.msg)), 'IPVS capability reported');
    assert.ok(run.lines.some((l) => /^raw sockets \(CAP_NET_RAW\): /.test(l.msg)), 'raw socket capability reported');
    assert.ok(run.lines.some((l) => /^dataplane: (ipvs|nftables|userspace) \(/.test(l.msg)), 'dataplane choice reported');
    assert.ok(run.lines.some((l) => l.instance === 'VI_OUTSIDE'), 'instance lines carry the instance name');
    assert.ok(run.lines.some((l) => l.virtualServer === 'web'), 'service lines carry the service name');

    // A broken config: every error logged with its place, the old config kept, still running.
    writeFileSync(cfg, readFileSync(EXAMPLE, 'utf8').replace('priority: 150                  # director-2: 100\n      state: MASTER                  # director-2: BACKUP (a hint', 'priority: 0\n      state: MASTER                  # director-2: BACKUP (a hint').replace('scheduler: wlc', 'scheduler: wlcc'));
    run.child.kill('SIGHUP');
    const rejected = await run.waitFor(/^reload rejected/);
    assert.equal(rejected.errors, 2);
    assert.ok(run.lines.some((l) => l.level === 'error' && l.msg.startsWith(`${cfg}:`) && /priority: 0 is out of range 1\.\.255/.test(l.msg)));
    assert.ok(run.lines.some((l) => l.level === 'error' && /scheduler: "wlcc" is not one of/.test(l.msg)));
    assert.equal(run.child.exitCode, null, 'still running after a bad reload');

    // A good change: only the difference is reported and handed to the daemon.
    writeFileSync(cfg, readFileSync(EXAMPLE, 'utf8').replace('{ address: 10.0.1.12, port: 80, weight: 100 }', '{ address: 10.0.1.12, port: 80, weight: 10 }'));
    run.child.kill('SIGHUP');
    await run.waitFor(/^reload done$/);
    const changes = run.lines.filter((l) => typeof l.change === 'string').map((l) => l.change);
    assert.deepEqual(changes, ['~ real server web 10.0.1.12:80: weight']);

    run.child.kill('SIGTERM');
    assert.equal(await run.exit, 0);
    assert.ok(run.lines.some((l) => l.msg === 'SIGTERM: shutting down'));
    assert.equal(run.lines.at(-1)?.msg, 'shut down');
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run: SIGINT also stops gracefully', async () => {
  const run = startRun(['--config', EXAMPLE]);
  try {
    await run.waitFor(/^running$/);
    run.child.kill('SIGINT');
    assert.equal(await run.exit, 0);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});

test('run: an invalid config at start exits 1 after logging every error', async () => {
  const f = fileURLToPath(new URL('../../../test/fixtures/config/duplicate-vrid.yaml', import.meta.url));
  const run = startRun(['--config', f]);
  try {
    assert.equal(await run.exit, 1);
    assert.ok(run.lines.some((l) => l.level === 'error' && /virtualRouterId 51 is already used/.test(l.msg)));
    assert.match(run.lines.at(-1)?.msg ?? '', /config is invalid \(1 error\); not starting/);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});
