// Runs INSIDE the QEMU guest (real IPVS): the keepalived corpus, keepalived against lvsd. IPVS is per
// network namespace, so both run at once on the same clock: namespace "ka" runs keepalived's checker
// process (`keepalived --check`) on every ORIGINAL corpus file with virtual servers (and on
// test/fixtures/keepalived-checks/fail-and-recover.conf, real servers that fail each its checker's way), namespace "lv" runs
// `lvsd run` on the IMPORTED configs (test/support/keepalived-corpus.ts: ipvsOnlyConfig of mergeConfigs —
// one lvsd for all files, because seven Node daemons starting at once starve the emulated guest). Each
// namespace holds the same real servers (test/vm/guest/targets.ts on a dummy interface), so every checker
// meets a live server. Phases, each compared file by file and as one table (`ipvsadm -Sn`, thresholds,
// timeouts):
//   up      — every real server answers (the HTTP digest in checkers.conf deliberately matches nothing)
//   quorum  — lvs-nat-sorry.conf's real servers vanish: quorum lost, sorry server in; and at the same time
//             fail-and-recover.conf's servers fail: ICMP echo dropped by nftables (PING_CHECK), a 554 banner
//             (SMTP_CHECK), a closed UDP socket (UDP_CHECK without require_reply), a wrong reply (with it), a
//             404 on one of two urls (HTTP_GET), a refused port or a 404 beside a TCP_CHECK (two checkers)
//   back    — they return: quorum regained, the failed servers recover
//   stop    — SIGTERM to both
// A difference is allowed only where DIFFERENCES below names it, line for line, with the reason.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { startRun, type LvsdRun } from '../../support/lvsd-run.js';
import { LVSD_BUNDLE } from '../bundle-path.js';
import { CORPUS_DIR, corpusFiles, importCorpusFile, ipvsOnlyConfig, lineDiff, mergeConfigs, serviceKeyOfLine, serviceKeys, thresholdLines } from '../../support/keepalived-corpus.js';
import { Checks, ipvsadmSave, sh } from './checks.js';
import type { Target } from './targets.js';

type Phase = 'up' | 'quorum' | 'back';

/**
 * Not a corpus file: real servers that fail and recover, each its checker's way (the file says how). On by
 * default; LVSD_VM_CORPUS_CHECKS=0 leaves it out. It first ran with the host at load 15–21 and lvsd's table
 * lagged its own verdicts by minutes: the counters poll and the IPVS resync piled reads on the dump sockets
 * (fixed, test/unit/dataplane-backlog.test.ts; issue 16's report has the figures of both runs).
 */
const CHECKS_FILE = join('..', 'keepalived-checks', 'fail-and-recover.conf');
const withChecks = process.env.LVSD_VM_CORPUS_CHECKS !== '0';
const FAIL = '554 no service here';

/** The real servers each corpus file's checkers talk to, as they must answer for keepalived to call them up. */
const TARGETS: Record<string, { targets: Target[]; localOnly?: string[] }> = {
  'checkers.conf': {
    targets: [
      { kind: 'http', address: '10.30.1.1', port: 8000 }, // TCP_CHECK: a connect is enough
      { kind: 'http', address: '10.30.1.2', port: 8001 }, // HTTP_GET: body "ok" fits the regex, not the digest → down in both
      { kind: 'https', address: '10.30.1.3', port: 8000 },
      { kind: 'dns', address: '10.30.1.5', port: 8000 }, // DNS_CHECK asks the real server's port
      { kind: 'smtp', address: '10.30.1.7', port: 8000 }, // SMTP_CHECK: banner, HELO, QUIT
      { kind: 'udp', address: '10.30.1.1', port: 4000, reply: 'OK' },
    ],
    // bindto source; PING_CHECK target (an address of its own, so the echo is answered); MISC_CHECK runs /usr/local/bin/check-app (written below)
    localOnly: ['10.30.0.2', '10.30.1.6'],
  },
  'fwmark-services.conf': {
    targets: [
      { kind: 'http', address: '10.5.0.1', port: 443 },
      { kind: 'http', address: '10.5.0.2', port: 443 },
      { kind: 'dns', address: '10.5.1.1', port: 53 },
      { kind: 'dns', address: '10.5.1.2', port: 53 },
    ],
  },
  'include-tree/keepalived.conf': { targets: [{ kind: 'http', address: '10.40.1.1', port: 80 }] },
  'lvs-dr-web.conf': {
    targets: [
      ...['10.1.0.11', '10.1.0.12', '10.1.0.13'].map((address): Target => ({ kind: 'http', address, port: 80 })),
      ...['10.1.0.11', '10.1.0.12'].map((address): Target => ({ kind: 'https', address, port: 443 })),
    ],
  },
  'lvs-nat-sorry.conf': { targets: ['10.2.0.11', '10.2.0.12', '10.2.0.13'].map((address): Target => ({ kind: 'http', address, port: 80 })) },
  'v2-auth-tun.conf': { targets: ['198.51.100.1', '198.51.100.2'].map((address): Target => ({ kind: 'http', address, port: 80 })) },
  'vs-group.conf': { targets: ['10.20.1.1', '10.20.1.2'].map((address): Target => ({ kind: 'http', address, port: 80 })) },
  [CHECKS_FILE]: {
    targets: [
      { kind: 'http', address: '10.60.2.1', port: 80, failed: { notFound: ['/b'] } },
      { kind: 'http', address: '10.60.2.2', port: 80, notFound: ['/b'] },
      { kind: 'http', address: '10.60.3.1', port: 80 },
      { kind: 'http', address: '10.60.3.1', port: 81, failed: { closed: true } },
      { kind: 'http', address: '10.60.3.2', port: 80, failed: { notFound: ['/a'] } },
      { kind: 'http', address: '10.60.3.2', port: 81 },
      { kind: 'smtp', address: '10.60.4.1', port: 25, failed: { banner: FAIL } },
      { kind: 'smtp', address: '10.60.4.2', port: 25, banner: FAIL },
      { kind: 'udp', address: '10.60.5.1', port: 4001, failed: { closed: true } }, // silent, then closed
      { kind: 'udp', address: '10.60.5.3', port: 4001, reply: 'OK', failed: { reply: 'NO' } },
      { kind: 'udp', address: '10.60.5.4', port: 4001 }, // silent
    ],
    // PING_CHECK targets (the namespace's kernel answers); 10.60.5.2 has no UDP socket at all
    localOnly: ['10.60.1.1', '10.60.1.2', '10.60.5.2'],
  },
};

/** The echo requests nftables drops while the servers are failed (PING_CHECK of 10.60.1.1). */
const DROP_PING = 'table inet lvsd_corpus {\n  chain input {\n    type filter hook input priority 0;\n    ip daddr 10.60.1.1 icmp type echo-request drop\n  }\n}\n';
/**
 * What keepalived 2.2.7 keeps in each service of fail-and-recover.conf (as the issue measured it: every url
 * must pass, every checker of a server must pass, a 554 banner fails SMTP_CHECK, UDP_CHECK without
 * require_reply fails on an ICMP port unreachable only): asserted of keepalived, then lvsd must match it.
 */
const CHECKS_POOL: Record<'up' | 'failed', Record<string, string[]>> = {
  up: {
    '-t 10.60.0.10:25': ['10.60.4.1:25'],
    '-t 10.60.0.10:80': ['10.60.1.1:80', '10.60.1.2:80', '10.60.2.1:80', '10.60.3.1:80', '10.60.3.2:80'],
    '-u 10.60.0.10:4001': ['10.60.5.1:4001', '10.60.5.3:4001'],
  },
  failed: { '-t 10.60.0.10:25': [], '-t 10.60.0.10:80': ['10.60.1.2:80'], '-u 10.60.0.10:4001': [] },
};
const NAT_SORRY_SERVERS = ['10.2.0.11', '10.2.0.12', '10.2.0.13'];

/**
 * Where keepalived and lvsd program different lines: each entry names the lines and why. `owner` marks a
 * known lvsd bug outside the importer (the file to fix): the check then fails the day the bug is fixed,
 * so the entry is removed with it — never a blanket ignore.
 */
interface Difference {
  file: string;
  phases: Phase[];
  onlyKeepalived: string[];
  onlyLvsd: string[];
  why: string;
  owner?: string;
}
const DIFFERENCES: Difference[] = [];

const checks = new Checks();
const dir = mkdtempSync(join(tmpdir(), 'lvsd-corpus-'));
const targetsJs = fileURLToPath(new URL('./targets.js', import.meta.url));
const files = [...corpusFiles().filter((f) => (importCorpusFile(f).config.virtualServers?.length ?? 0) > 0), ...(withChecks ? [CHECKS_FILE] : [])];
const keysOf = new Map(files.map((f) => [f, new Set(serviceKeys(importCorpusFile(f).config))]));

interface Side {
  ns: 'ka' | 'lv';
  table: () => Promise<string[]>;
}
const side = (ns: 'ka' | 'lv'): Side => ({ ns, table: () => ipvsadmSave(`ip netns exec ${ns} `) });
const ka = side('ka');
const lv = side('lv');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function waitUntil(f: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

/** The checks file's services: service key → the real servers in it with a weight above 0, sorted. */
function pools(lines: string[]): Record<string, string[]> {
  const out = Object.fromEntries(Object.keys(CHECKS_POOL.up).map((key): [string, string[]] => [key, []]));
  for (const x of lines) {
    const t = x.trim().split(/\s+/);
    if (t[0] === '-a' && t[t.indexOf('-w') + 1] !== '0') out[`${t[1] ?? ''} ${t[2] ?? ''}`]?.push(t[4] ?? '');
  }
  for (const v of Object.values(out)) v.sort();
  return out;
}
const pooled = (state: 'up' | 'failed') => (lines: string[]): boolean => !withChecks || isDeepStrictEqual(pools(lines), CHECKS_POOL[state]);

/** keepalived keeps in fail-and-recover.conf's services what CHECKS_POOL says (it is the anchor); lvsd is compared with it after. */
function keepalivedPools(state: 'up' | 'failed', k: string[], ms: number): string {
  assert.deepEqual(pools(k), CHECKS_POOL[state], `keepalived's pools of ${CHECKS_FILE} (${state}) after ${ms} ms:\n${k.join('\n')}`);
  return Object.entries(pools(k)).map(([key, rs]) => `${key}: ${rs.length === 0 ? 'empty' : rs.join(' ')}`).join('; ');
}

/** Fails or recovers the servers of fail-and-recover.conf in both namespaces: the targets' `failed` behaviour, ICMP echo dropped. */
async function failChecks(to: 'failed' | 'recovered'): Promise<void> {
  await Promise.all(targets.map((t) => new Promise<void>((resolve) => {
    const on = (d: Buffer): void => {
      if (!d.toString().includes(to)) return;
      t.stdout?.off('data', on);
      resolve();
    };
    t.stdout?.on('data', on);
    t.kill(to === 'failed' ? 'SIGUSR1' : 'SIGUSR2');
  })));
  const rules = join(dir, 'drop-ping.nft');
  writeFileSync(rules, DROP_PING);
  await sh(['ka', 'lv'].map((ns) => (to === 'failed' ? `ip netns exec ${ns} nft -f ${rules}` : `ip netns exec ${ns} nft delete table inet lvsd_corpus`)).join(' && '));
}

async function setUpNamespace(ns: string): Promise<void> {
  const addresses = new Set(Object.values(TARGETS).flatMap((t) => [...t.targets.map((x) => x.address), ...(t.localOnly ?? [])]));
  const batch = join(dir, `${ns}.ip`);
  writeFileSync(batch, ['link add tgt type dummy', 'link set tgt up', 'link set lo up', ...[...addresses].map((a) => `addr add ${a}/32 dev tgt`)].join('\n') + '\n');
  await sh(`ip netns add ${ns} && ip -n ${ns} -batch ${batch}`);
}

function startTargets(ns: string, cert: string, key: string): Promise<ChildProcess> {
  const spec = join(dir, 'targets.json');
  writeFileSync(spec, JSON.stringify(Object.values(TARGETS).flatMap((t) => t.targets)));
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, targetsJs, spec, cert, key], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => { reject(new Error(`targets in ${ns} exited (${String(code)})`)); });
  });
}

interface Keepalived {
  file: string;
  child: ChildProcess;
  log: string;
  exited: Promise<void>;
}

function startKeepalived(file: string, i: number): Keepalived {
  const child = spawn('ip', ['netns', 'exec', 'ka', 'keepalived', '--dont-fork', '--log-console', '--log-detail', '--check', '-f', join(CORPUS_DIR, file),
    '-p', join(dir, `ka-${i}.pid`), '-c', join(dir, `kac-${i}.pid`), '-r', join(dir, `kav-${i}.pid`)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const k: Keepalived = { file, child, log: '', exited: new Promise((r) => child.once('exit', () => { r(); })) };
  const add = (d: Buffer): void => { k.log += d.toString(); };
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  return k;
}

function startLvsd(): LvsdRun {
  const here = join(dir, 'lvsd');
  mkdirSync(here);
  const merged = mergeConfigs(files.map((f) => importCorpusFile(f).config));
  const config = ipvsOnlyConfig(merged, { listen: '127.0.0.1:9300', socket: join(here, 'lvsd.sock'), stateFile: join(here, 'state.json') });
  const path = join(here, 'lvsd.yaml');
  writeFileSync(path, YAML.stringify(config));
  // The one-file bundle: the project share has no page cache in the guest, and lvsd's module graph read file by
  // file took ~4 minutes of this test under TCG.
  return startRun(['--config', path], ['ip', 'netns', 'exec', 'lv'], LVSD_BUNDLE);
}

/**
 * Polls both tables until each has been still for 5 s, at least minMs have passed and `until` holds (or
 * timeoutMs passed: the comparison then shows what differs). Checkers on an emulated, shared machine can
 * time out now and then on either side; a table that converges and stays put is what is compared.
 */
async function settle(minMs: number, timeoutMs: number, until: (k: string[], l: string[]) => boolean): Promise<{ k: string[]; l: string[]; ms: number }> {
  const t0 = Date.now();
  let k = seen('ka', await ka.table());
  let l = seen('lv', await lv.table());
  let still = Date.now();
  for (;;) {
    await sleep(1000);
    const [k2, l2] = [seen('ka', await ka.table()), seen('lv', await lv.table())];
    if (k2.join('\n') !== k.join('\n') || l2.join('\n') !== l.join('\n')) still = Date.now();
    [k, l] = [k2, l2];
    const elapsed = Date.now() - t0;
    if ((elapsed >= minMs && Date.now() - still >= 5000 && until(k, l)) || elapsed > timeoutMs) return { k, l, ms: elapsed };
  }
}

/**
 * When a line of the checks file's services came or went in each table, as settle's 1 s polls see it (a move
 * between two phases is stamped with the next phase's first read: an upper bound).
 */
const tableMoves: { at: number; ns: 'ka' | 'lv'; line: string }[] = [];
const lastRead: Record<'ka' | 'lv', string[] | null> = { ka: null, lv: null };
function seen(ns: 'ka' | 'lv', after: string[]): string[] {
  const before = lastRead[ns];
  lastRead[ns] = after;
  if (!withChecks || before === null) return after;
  const mine = (x: string): boolean => x.includes(' 10.60.');
  const [b, a] = [new Set(before), new Set(after)];
  for (const x of [...after.filter((y) => !b.has(y)), ...before.filter((y) => !a.has(y))]) if (mine(x)) tableMoves.push({ at: Date.now(), ns, line: x });
  return after;
}

/**
 * For each real server of the checks file whose entry moved since `since`: when keepalived's table moved, when
 * lvsd logged its verdict and when lvsd's table moved, in seconds after `since` — the figures that tell a late
 * verdict from a table that lags its verdict.
 */
function timeline(since: number): string {
  const servers = [...new Set(tableMoves.filter((m) => m.at >= since).map((m) => m.line.split(/\s+/)[4] ?? ''))].sort();
  const secs = (t: number | undefined): string => (t === undefined ? '—' : `${((t - since) / 1000).toFixed(1)} s`);
  return servers.map((rs) => {
    const moved = (ns: 'ka' | 'lv'): number | undefined => tableMoves.find((m) => m.at >= since && m.ns === ns && m.line.split(/\s+/)[4] === rs)?.at;
    const verdict = lvsd.lines.find((x) => /^real server (up|down)/.test(x.msg) && x.realServer === rs && Date.parse(String(x.time)) >= since);
    return `${rs}: keepalived's table ${secs(moved('ka'))}, lvsd's verdict ${secs(verdict === undefined ? undefined : Date.parse(String(verdict.time)))}, lvsd's table ${secs(moved('lv'))}`;
  }).join('; ');
}

/** The two tables differ exactly as DIFFERENCES says for this phase. */
function asDeclared(phase: Phase, k: string[], l: string[]): boolean {
  const d = lineDiff(k, l);
  return JSON.stringify({ onlyKeepalived: d.onlyA, onlyLvsd: d.onlyB }) === JSON.stringify(expectedDiff(null, phase));
}

function expectedDiff(file: string | null, phase: Phase): { onlyKeepalived: string[]; onlyLvsd: string[] } {
  const ds = DIFFERENCES.filter((d) => (file === null || d.file === file) && d.phases.includes(phase));
  return { onlyKeepalived: ds.flatMap((d) => d.onlyKeepalived).sort(), onlyLvsd: ds.flatMap((d) => d.onlyLvsd).sort() };
}

/** One file's part of both tables must be equal up to its declared differences, and not empty. */
function compareFile(file: string, phase: Phase, k: string[], l: string[]): string {
  const keys = keysOf.get(file) ?? new Set<string>();
  const mine = (lines: string[]): string[] => lines.filter((x) => keys.has(serviceKeyOfLine(x)));
  const [kf, lf] = [mine(k), mine(l)];
  for (const key of keys) assert.ok(kf.some((x) => x.startsWith(`-A ${key} `)), `keepalived did not program ${key}:\n${k.join('\n')}`);
  const d = lineDiff(kf, lf);
  const expected = expectedDiff(file, phase);
  if (!isDeepStrictEqual({ onlyKeepalived: d.onlyA, onlyLvsd: d.onlyB }, expected)) {
    const servers = [...new Set([...d.onlyA, ...d.onlyB].map((x) => x.split(/\s+/)[4] ?? ''))];
    assert.deepEqual({ onlyKeepalived: d.onlyA, onlyLvsd: d.onlyB }, expected, `${file} (${phase}) keepalived:\n${kf.join('\n')}\nlvsd:\n${lf.join('\n')}\n${said(servers)}`);
  }
  const declared = DIFFERENCES.filter((x) => x.file === file && x.phases.includes(phase)).map((x) => `declared difference: ${x.why}${x.owner === undefined ? '' : ` [lvsd bug, fix in ${x.owner}]`}`);
  return [...declared, ...kf].join('\n');
}

/** What each side last said about these real servers (ADDRESS:PORT): why a comparison failed. */
function said(servers: string[]): string {
  const out: string[] = [];
  for (const rs of servers) {
    const address = rs.replace(/:\d+$/, '');
    const ka = kads.flatMap((k) => k.log.split('\n')).filter((x) => x.includes(`[${address}]`)).slice(-4);
    const mine = new RegExp(`${address.replace(/\./g, '\\.')}(?![0-9])`);
    const lvLines = lvsd.lines.filter((x) => /^(real server|checker) /.test(x.msg) && mine.test(JSON.stringify(x))).slice(-6);
    out.push(`${rs}: keepalived said:\n  ${ka.join('\n  ')}\nlvsd said:\n  ${lvLines.map((x) => `${String(x.time)} ${x.msg} ${JSON.stringify(x.checker ?? '')} (${String(x.reason)})`).join('\n  ')}`);
  }
  return out.join('\n');
}

async function compareWhole(phase: Phase, k: string[], l: string[]): Promise<string> {
  const d = lineDiff(k, l);
  assert.deepEqual({ onlyKeepalived: d.onlyA, onlyLvsd: d.onlyB }, expectedDiff(null, phase), `whole table (${phase})`);
  // Destinations a declared difference already accounts for are left out of the threshold view too.
  const declared = Object.values(expectedDiff(null, phase)).flat().map((x) => {
    const t = x.split(/\s+/);
    return `${t[2] ?? ''} -> ${t[4] ?? ''} `;
  });
  const thr = async (ns: string): Promise<string[]> =>
    thresholdLines(await sh(`ip netns exec ${ns} ipvsadm -Ln --thresholds`)).filter((x) => !declared.some((d) => x.includes(d)));
  assert.deepEqual(await thr('lv'), await thr('ka'), 'thresholds (ipvsadm -Ln --thresholds)');
  const timeouts = async (ns: string): Promise<string> => (await sh(`ip netns exec ${ns} ipvsadm -L --timeout`)).trim();
  assert.equal(await timeouts('lv'), await timeouts('ka'), 'connection timeouts (ipvsadm -L --timeout)');
  return `${k.length} lines; ${(await thr('ka')).length} destinations with thresholds; ${await timeouts('ka')}`;
}

// ---- set-up: scripts the corpus calls, a certificate, two namespaces with the same real servers
for (const s of ['/usr/local/bin/check-app', '/usr/local/bin/rs-event', '/usr/local/sbin/lvs-quorum']) {
  mkdirSync(join(s, '..'), { recursive: true });
  writeFileSync(s, '#!/bin/sh\nexit 0\n');
  chmodSync(s, 0o755);
}
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
await sh(`openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ${key} -out ${cert} -subj /CN=www.example.com -days 2 2>/dev/null`);
await setUpNamespace('ka');
await setUpNamespace('lv');
const targets = [await startTargets('ka', cert, key), await startTargets('lv', cert, key)];

// lvsd first and alone (a Node daemon's start is the heaviest thing the emulated guest does), then keepalived.
const lvsd = startLvsd();
const serviceCount = files.reduce((n, f) => n + (keysOf.get(f)?.size ?? 0), 0);
await checks.check(`lvsd programs the imported corpus on the ipvs dataplane (${files.length} files: ${files.join(', ')})`, async () => {
  const t0 = Date.now();
  await lvsd.waitFor(/^dataplane: ipvs /, 480_000);
  try {
    await waitUntil(() => lvsd.lines.filter((x) => /^virtual server .* programmed in ipvs$/.test(x.msg)).length === serviceCount, 480_000, `${serviceCount} virtual servers programmed`);
  } catch (e) {
    // what lvsd said (its warnings and errors, then its last lines) and whether it still runs
    const said = (l: { level: string; msg: string }): string => `${l.level} ${l.msg}`.slice(0, 300);
    const loud = lvsd.lines.filter((l) => ['warn', 'error', 'fatal'].includes(l.level)).slice(0, 20).map(said);
    throw new Error(`${(e as Error).message}; lvsd exit code ${String(lvsd.child.exitCode)}; warnings and errors:\n${loud.join('\n')}\nlast lines:\n${lvsd.lines.slice(-20).map(said).join('\n')}\nstderr:\n${lvsd.stderr().slice(-3000)}`);
  }
  return `${serviceCount} virtual servers programmed after ${Date.now() - t0} ms`;
});
const kads = files.map((f, i) => startKeepalived(f, i));
const started = Date.now();
await checks.check('keepalived runs every original corpus file (--check)', async () => {
  await sleep(2000);
  for (const k of kads) assert.equal(k.child.exitCode, null, `keepalived exited on ${k.file}:\n${k.log}`);
});

// ---- phase "up"
const programmed = (k: string[]): boolean => files.every((f) => [...(keysOf.get(f) ?? [])].every((key) => k.some((x) => x.startsWith(`-A ${key} `))));
let s = await settle(20_000, 150_000, (k, l) => programmed(k) && pooled('up')(k) && pooled('up')(l) && asDeclared('up', k, l));
if (withChecks) await checks.check(`up: ${CHECKS_FILE}: keepalived keeps the servers whose every checker and url passes`, () => Promise.resolve(keepalivedPools('up', s.k, s.ms)));
for (const f of files) await checks.check(`up: ${f}: keepalived and lvsd program the same ipvsadm -Sn`, () => Promise.resolve(compareFile(f, 'up', s.k, s.l)));
await checks.check('up: the whole table, thresholds and timeouts are the same', () => compareWhole('up', s.k, s.l));

// ---- phase "quorum": lvs-nat-sorry.conf loses every real server; fail-and-recover.conf's servers fail
const delAll = (op: 'del' | 'add'): Promise<string> => sh(['ka', 'lv'].map((ns) => NAT_SORRY_SERVERS.map((a) => `ip -n ${ns} addr ${op} ${a}/32 dev tgt`).join(' && ')).join(' && '));
await delAll('del');
const failedAt = Date.now();
if (withChecks) await checks.check(`failed: ${CHECKS_FILE}: its servers fail (targets switched, ICMP echo dropped by nft)`, () => failChecks('failed'));
const sorry = (lines: string[]): boolean => lines.some((x) => x.includes('-r 10.2.0.250:8080'));
s = await settle(5_000, 150_000, (k, l) => sorry(k) && sorry(l) && pooled('failed')(k) && pooled('failed')(l) && asDeclared('quorum', k, l));
if (withChecks) {
  await checks.check(`failed: ${CHECKS_FILE}: keepalived drops the servers that fail PING, SMTP, UDP, one url, one of two checkers`, () => Promise.resolve(keepalivedPools('failed', s.k, s.ms)));
  await checks.check(`failed: ${CHECKS_FILE}: lvsd drops the same (ipvsadm -Sn)`, () => Promise.resolve(`${timeline(failedAt)}\n${compareFile(CHECKS_FILE, 'quorum', s.k, s.l)}`));
}
await checks.check('quorum lost: lvs-nat-sorry.conf: the sorry server comes in the same way', () => {
  assert.ok(sorry(s.k), `keepalived put no sorry server in after ${s.ms} ms:\n${s.k.join('\n')}`);
  return Promise.resolve(compareFile('lvs-nat-sorry.conf', 'quorum', s.k, s.l));
});
await checks.check('quorum lost: the whole table is the same', () => compareWhole('quorum', s.k, s.l));

// ---- phase "back": the real servers return, the failed ones recover
await delAll('add');
const backAt = Date.now();
if (withChecks) await checks.check(`back: ${CHECKS_FILE}: its servers recover`, () => failChecks('recovered'));
const back = (lines: string[]): boolean => lines.some((x) => x.startsWith('-a -t 198.51.100.20:80 -r 10.2.0.11:80') && !x.endsWith('-w 0'));
s = await settle(5_000, 150_000, (k, l) => back(k) && back(l) && pooled('up')(k) && pooled('up')(l) && asDeclared('back', k, l));
if (withChecks) await checks.check(`back: ${CHECKS_FILE}: keepalived takes the recovered servers back`, () => Promise.resolve(keepalivedPools('up', s.k, s.ms)));
for (const f of files) await checks.check(`back: ${f}: still the same after ${Math.round((Date.now() - started) / 1000)} s`, () => Promise.resolve(`${f === CHECKS_FILE ? `${timeline(backAt)}\n` : ''}${compareFile(f, 'back', s.k, s.l)}`));
await checks.check('back: the whole table is the same', () => compareWhole('back', s.k, s.l));

// ---- stop
// keepalived removes its services on SIGTERM; lvsd leaves its table in place (restarts and upgrades don't
// drop traffic) — omega included: checkers.conf sets it, its down hooks run, the table stays.
await checks.check('stop: keepalived removes its virtual servers on SIGTERM; lvsd leaves its table as it was (omega too)', async () => {
  for (const k of kads) k.child.kill('SIGTERM');
  await Promise.all(kads.map((k) => k.exited));
  assert.deepEqual(await ka.table(), []);
  const before = await lv.table();
  const seen = lvsd.lines.length;
  lvsd.child.kill('SIGTERM');
  assert.equal(await lvsd.exit, 0);
  const during = lvsd.lines.slice(seen);
  assert.ok(during.some((x) => x.msg === 'real server down: lvsd stopping'), 'omega: the real servers are reported down at shutdown');
  assert.deepEqual(await lv.table(), before);
  return `${before.length} lines left in place`;
});

for (const t of targets) t.kill('SIGKILL');
checks.finish();
