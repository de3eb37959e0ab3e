// An operator's BGP withdraw outlives a restart: the BGP supervisor with the real state store on a temp dir
// and a fake BIRD on a unix socket (answers as bird 2.0.12 does, recorded in bgp.test.ts), so what is
// checked is what BIRD is told — the first fragment after a restart, and the enable/disable commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { protocolName } from '../../daemon/bgp/bird-config.js';
import { formatError } from '../../daemon/config/errors.js';
import { loadConfigText } from '../../daemon/config/load.js';
import type { Config } from '../../daemon/config/types.js';
import { BgpSupervisor, type BgpWithdrawnStore } from '../../daemon/director/bgp-supervisor.js';
import { openStore, StateFileError } from '../../daemon/state/store.js';

const VIP = '192.0.2.10/32';
const NET = '198.51.100.0/24';

/** A BIRD control socket: records every command; `configure check` is refused while `refuseCheck`. */
class FakeBird {
  readonly commands: string[] = [];
  refuseCheck = false;
  private readonly conns = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async listen(path: string): Promise<FakeBird> {
    const server = createServer();
    const bird = new FakeBird(server);
    server.on('connection', (c) => {
      bird.conns.add(c);
      c.on('close', () => bird.conns.delete(c));
      c.write('0001 BIRD 2.0.12 ready.\n');
      let rest = '';
      c.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop() ?? '';
        for (const cmd of lines) c.write(bird.answer(cmd));
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return bird;
  }

  private answer(cmd: string): string {
    this.commands.push(cmd);
    if (cmd === 'configure check') return this.refuseCheck ? '0002-Reading configuration from bird.conf\n8002 lvsd.conf:6:44 syntax error\n' : '0020 Configuration OK\n';
    if (cmd.startsWith('configure timeout')) return '0004 Reconfiguration in progress\n';
    if (cmd === 'configure confirm') return '0018 Reconfiguration confirmed\n';
    const m = /^(enable|disable) (\S+)$/.exec(cmd);
    if (m !== null) return `00${m[1] === 'enable' ? '11' : '12'}-${m[2] ?? ''}: ${m[1] ?? ''}d\n0000 \n`;
    return '0000 \n';
  }

  /** The enable/disable commands since the last call. */
  toggles(): string[] {
    const out = this.commands.filter((c) => /^(enable|disable) /.test(c));
    this.commands.length = 0;
    return out;
  }

  close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    return new Promise((resolve) => this.server.close(() => { resolve(); }));
  }
}

function setup(t: { after(fn: () => unknown): void }): { dir: string; config: (prefixes: readonly string[]) => Config; state: string; fragment: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-bgp-kept-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const fragment = join(dir, 'lvsd.conf');
  const config = (prefixes: readonly string[]): Config => {
    const text = [
      'virtualServers:',
      '  - { name: web, address: 192.0.2.10, port: 443, realServers: [{ address: 10.0.1.11 }] }',
      '  - { name: api, address: 198.51.100.20, port: 443, realServers: [{ address: 10.0.1.11 }] }',
      'bgp:',
      `  socket: ${join(dir, 'bird.ctl')}`,
      `  configFile: ${fragment}`,
      '  drainOnStop: 0s',
      '  announce:',
      ...prefixes.map((p) => (p === NET ? `    - { prefix: ${p}, virtualServers: [api] }` : `    - prefix: ${p}`)),
    ].join('\n');
    const r = loadConfigText(text, 'lvsd.yaml');
    if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
    return r.config;
  };
  return { dir, config, state: join(dir, 'state.json'), fragment };
}

function logs(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

function supervisor(kept: BgpWithdrawnStore, logger: Logger = pino({ level: 'silent' })): BgpSupervisor {
  return new BgpSupervisor({ logger, emit: () => undefined, quorumLost: { has: () => false }, kept, pollMs: 60_000 });
}

const disabled = (fragment: string, prefix: string): boolean => {
  const m = new RegExp(`protocol static ${protocolName(prefix)} \\{\\n  disabled (yes|no);`).exec(readFileSync(fragment, 'utf8'));
  assert.ok(m, `${prefix} is in the fragment`);
  return m[1] === 'yes';
};
const withdrawnBy = (s: BgpSupervisor, prefix: string): string | null | undefined => s.view()?.announcements.find((a) => a.prefix === prefix)?.withdrawnBy;

test('a withdraw is kept in the state file and re-applied at start: BIRD never announces it again until a restore', async (t) => {
  const { dir, config, state, fragment } = setup(t);
  const bird = await FakeBird.listen(join(dir, 'bird.ctl'));
  t.after(() => bird.close());
  const cfg = config([VIP, NET]);

  const first = supervisor((await openStore(state)).store);
  await first.start(cfg);
  assert.equal(disabled(fragment, NET), false);
  await first.force(NET, 'withdraw', 'alice');
  assert.deepEqual(bird.toggles(), [`disable ${protocolName(NET)}`]);
  const kept = JSON.parse(readFileSync(state, 'utf8')) as { bgpWithdrawn?: { prefix: string; by: string }[] };
  assert.deepEqual(kept.bgpWithdrawn?.map((w) => [w.prefix, w.by]), [[NET, 'alice']]);
  await first.stop();

  // The restart: a new store over the same file, a new supervisor. Its first fragment has NET withdrawn.
  bird.toggles();
  const second = supervisor((await openStore(state)).store);
  await second.start(cfg);
  assert.equal(disabled(fragment, NET), true, 'withdrawn in the first fragment BIRD reads');
  assert.equal(disabled(fragment, VIP), false);
  assert.deepEqual(bird.toggles(), [], 'configured from the fragment: no enable of the withdrawn prefix');
  assert.equal(withdrawnBy(second, NET), 'alice');
  assert.equal(second.view()?.announcements.find((a) => a.prefix === NET)?.announced, false);

  await second.force(NET, 'restore', 'bob');
  assert.deepEqual(bird.toggles(), [`enable ${protocolName(NET)}`]);
  assert.equal((JSON.parse(readFileSync(state, 'utf8')) as Record<string, unknown>).bgpWithdrawn, undefined, 'restore removes it from the file');
  assert.deepEqual((await openStore(state)).store.bgpWithdrawn(), []);
  await second.stop();
});

test('a prefix no longer in bgp.announce loses its withdraw, with a log line: at start, and after a reload BIRD took', async (t) => {
  const { dir, config, state } = setup(t);
  const bird = await FakeBird.listen(join(dir, 'bird.ctl'));
  t.after(() => bird.close());
  const { store } = await openStore(state);
  await store.saveBgpWithdrawn([{ prefix: NET, by: 'alice', at: '2026-12-01T00:00:00.000Z' }, { prefix: VIP, by: 'carol', at: '2026-12-01T00:00:01.000Z' }]);

  const log = logs();
  const s = supervisor((await openStore(state)).store, log.logger);
  await s.start(config([VIP]));
  assert.deepEqual((await openStore(state)).store.bgpWithdrawn().map((w) => w.prefix), [VIP], 'NET dropped at start');
  assert.ok(log.lines.some((l) => l.includes(`dropping the operator withdraw of ${NET}: no longer in bgp.announce`)), log.lines.join(''));
  assert.equal(withdrawnBy(s, VIP), 'carol');

  // A reload BIRD refuses keeps everything as it was, withdrawals included.
  bird.refuseCheck = true;
  await assert.rejects(s.apply(config([NET])), /BIRD refused/);
  assert.deepEqual((await openStore(state)).store.bgpWithdrawn().map((w) => w.prefix), [VIP]);
  assert.equal(withdrawnBy(s, VIP), 'carol');

  bird.refuseCheck = false;
  await s.apply(config([NET]));
  assert.deepEqual((await openStore(state)).store.bgpWithdrawn(), []);
  assert.ok(log.lines.some((l) => l.includes(`dropping the operator withdraw of ${VIP}`)));
  assert.equal(withdrawnBy(s, NET), null);
  await s.stop();
});

test('a withdraw that cannot be written to the state file is refused and changes nothing', async (t) => {
  const { dir, config } = setup(t);
  const bird = await FakeBird.listen(join(dir, 'bird.ctl'));
  t.after(() => bird.close());
  const failing: BgpWithdrawnStore = { bgpWithdrawn: () => [], saveBgpWithdrawn: () => Promise.reject(new Error('ENOSPC: no space left on device')) };
  const s = supervisor(failing);
  await s.start(config([VIP]));
  bird.toggles();
  await assert.rejects(s.force(VIP, 'withdraw', 'alice'), /ENOSPC/);
  assert.deepEqual(bird.toggles(), [], 'BIRD was not told');
  assert.equal(withdrawnBy(s, VIP), null);
  await s.stop();
});

test('a state file from before withdrawals were kept loads; a bad entry is refused by field', async (t) => {
  const { state } = setup(t);
  const { store } = await openStore(state);
  assert.deepEqual(store.bgpWithdrawn(), []);
  const data = JSON.parse(readFileSync(state, 'utf8')) as Record<string, unknown>;
  assert.equal('bgpWithdrawn' in data, false, 'a new file has no bgpWithdrawn key either');
  writeFileSync(state, JSON.stringify({ ...data, bgpWithdrawn: [{ prefix: NET }] }));
  await assert.rejects(openStore(state), (e: unknown) => e instanceof StateFileError && /bgpWithdrawn/.test(e.message));
});

test('BIRD down at start: lvsd keeps the bgp section, retries, and configures BIRD (withdrawals included) once it answers', { timeout: 10_000 }, async (t) => {
  const { dir, config, state, fragment } = setup(t);
  const { store } = await openStore(state);
  await store.saveBgpWithdrawn([{ prefix: NET, by: 'alice', at: '2026-12-01T00:00:00.000Z' }]);
  const s = new BgpSupervisor({ logger: pino({ level: 'silent' }), emit: () => undefined, quorumLost: { has: () => false }, kept: store, pollMs: 20 });
  await s.start(config([VIP, NET]));
  assert.match(s.view()?.problem ?? '', /bird\.ctl/, 'the snapshot says BIRD is missing');
  assert.equal(withdrawnBy(s, NET), 'alice');
  const bird = await FakeBird.listen(join(dir, 'bird.ctl'));
  t.after(() => bird.close());
  while (!bird.commands.includes('configure confirm')) await new Promise((r) => setTimeout(r, 20));
  assert.equal(disabled(fragment, NET), true);
  assert.equal(disabled(fragment, VIP), false);
  await s.stop();
});
