// Real keepalived (Debian's package) as a VRRP peer inside a test namespace: writes its config,
// runs it in the foreground VRRP-only, and stops it gracefully (SIGTERM → priority-0 advert) or
// crashes it (SIGKILL to parent and VRRP child at once, so the parent cannot respawn the child).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Netns } from './netns.js';

export interface KeepalivedInstance {
  name: string;
  interface: string;
  vrid: number;
  priority: number;
  version: 2 | 3;
  /** Advertisement interval in seconds (v3: may be fractional, 0.01 steps). */
  interval: number;
  state?: 'MASTER' | 'BACKUP';
  nopreempt?: boolean;
  preemptDelay?: number;
  /** v2 PASS password. */
  authPass?: string;
  unicastSrc?: string;
  unicastPeers?: string[];
  /** virtual_ipaddress; may be empty (keepalived accepts that in v2 only). */
  vips: string[];
  /** virtual_ipaddress_excluded. */
  excludedVips?: string[];
  /** More lines inside the vrrp_instance block, as written (e.g. `use_vmac`, `vmac_xmit_base`). */
  extra?: string[];
}

/**
 * One statement per line: keepalived 2.2.7 rejects `{ a b }` on one line. `globals` are extra
 * global_defs lines; a later `vrrp_garp_master_delay` there overrides the default 0 (keepalived keeps the last).
 */
export function keepalivedConf(instances: KeepalivedInstance[], routerId = 'kad', globals: string[] = []): string {
  const lines = ['global_defs {', `  router_id ${routerId}`, '  vrrp_garp_master_delay 0', ...globals.map((g) => `  ${g}`), '}'];
  for (const i of instances) {
    lines.push(`vrrp_instance ${i.name} {`);
    lines.push(`  state ${i.state ?? 'BACKUP'}`, `  interface ${i.interface}`, `  virtual_router_id ${i.vrid}`);
    lines.push(`  priority ${i.priority}`, `  advert_int ${i.interval}`, `  version ${i.version}`);
    if (i.nopreempt === true) lines.push('  nopreempt');
    if (i.preemptDelay !== undefined) lines.push(`  preempt_delay ${i.preemptDelay}`);
    if (i.authPass !== undefined) lines.push('  authentication {', '    auth_type PASS', `    auth_pass ${i.authPass}`, '  }');
    if (i.unicastSrc !== undefined) lines.push(`  unicast_src_ip ${i.unicastSrc}`);
    if (i.unicastPeers !== undefined) lines.push('  unicast_peer {', ...i.unicastPeers.map((p) => `    ${p}`), '  }');
    if (i.vips.length > 0) lines.push('  virtual_ipaddress {', ...i.vips.map((v) => `    ${v}`), '  }');
    if (i.excludedVips !== undefined) lines.push('  virtual_ipaddress_excluded {', ...i.excludedVips.map((v) => `    ${v}`), '  }');
    for (const x of i.extra ?? []) lines.push(`  ${x}`);
    lines.push('}');
  }
  return lines.join('\n') + '\n';
}

/** The instances whose "(NAME) Entering STATE STATE" lines keepalived logged after offset `from` of its log. */
export function enteredState(log: string, state: string, from = 0): Set<string> {
  return new Set([...log.slice(from).matchAll(new RegExp(`\\((\\S+)\\) Entering ${state} STATE`, 'g'))].map((m) => m[1] ?? ''));
}

export interface Keepalived {
  readonly child: ChildProcess;
  /** Everything it logged so far. */
  log(): string;
  /** Resolves when a log line matches (rejects after timeoutMs). */
  waitForLog(re: RegExp, timeoutMs?: number): Promise<void>;
  /** keepalived's reload: writes `conf` over its config file (text configs only) and sends the parent SIGHUP. */
  reload(conf: string): void;
  /** Graceful: SIGTERM to the parent; resolves when it has exited. */
  stop(): Promise<void>;
  /** Crash: SIGKILL to the VRRP child and the parent together. */
  kill(): Promise<void>;
}

/** `conf` is the config text, or `{ file }` to run a config file where it is (its includes resolve there). */
export async function startKeepalived(ns: Netns, conf: string | { file: string }): Promise<Keepalived> {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-kad-'));
  const confPath = typeof conf === 'string' ? join(dir, 'keepalived.conf') : conf.file;
  if (typeof conf === 'string') writeFileSync(confPath, conf);
  const child = ns.spawn('keepalived', ['-n', '-l', '-D', '-P', '-f', confPath, '-p', join(dir, 'k.pid'), '-r', join(dir, 'v.pid')]);
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  let gone = false;
  void exited.then(() => {
    gone = true;
    rmSync(dir, { recursive: true, force: true });
  });
  const waitForLog = (re: RegExp, timeoutMs = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (re.test(out)) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`keepalived in ${ns.name}: no log line matching ${re} within ${timeoutMs} ms; log:\n${out}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  const pidOf = (f: string): number | null => {
    try {
      return Number(readFileSync(join(dir, f), 'utf8').trim());
    } catch {
      return null;
    }
  };
  const signal = (pid: number | null, sig: NodeJS.Signals): void => {
    if (pid === null || !Number.isInteger(pid) || pid <= 0) return;
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  };
  // The parent writes its pidfile once it runs; wait for it so stop()/kill() reach the right processes.
  await waitForLog(/Starting VRRP child process|Starting Keepalived/, 10_000);
  for (let i = 0; i < 100 && pidOf('v.pid') === null; i++) await new Promise((r) => setTimeout(r, 20));
  return {
    child,
    log: () => out,
    waitForLog,
    reload: (next) => {
      if (typeof conf !== 'string') throw new Error('reload() rewrites a config keepalived was started with as text');
      writeFileSync(confPath, next);
      signal(pidOf('k.pid'), 'SIGHUP');
    },
    stop: async () => {
      if (gone) return;
      signal(pidOf('k.pid'), 'SIGTERM');
      await exited;
    },
    kill: async () => {
      if (gone) return;
      const vrrp = pidOf('v.pid');
      const parent = pidOf('k.pid');
      signal(vrrp, 'SIGKILL');
      signal(parent, 'SIGKILL');
      signal(child.pid ?? null, 'SIGKILL');
      await exited;
    },
  };
}
