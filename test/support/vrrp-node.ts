// Runs lvsd's VRRP engine in a test namespace (through vrrp-node-main.js) and follows what it says.
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { Netns } from './netns.js';
import { crashTree } from './crash.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';
import type { TransitionEvent, VrrpSnapshot } from '../../daemon/vrrp/protocol.js';

export interface LvsdNode {
  readonly child: ChildProcess;
  readonly transitions: (TransitionEvent & { mono: number })[];
  readonly lines: Record<string, unknown>[];
  /** Resolves with the transition when `instance` enters `state` (counting ones already seen after `since`). */
  waitState(instance: string, state: string, timeoutMs?: number, since?: number): Promise<TransitionEvent & { mono: number }>;
  waitLine(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  state(instance: string): string | undefined;
  snapshot(): Promise<VrrpSnapshot>;
  command(line: string): void;
  /** SIGTERM: graceful (priority 0, VIPs released); resolves on exit. */
  stop(): Promise<void>;
  /** SIGKILL to the node and its VRRP engine process at once: a crash. */
  kill(): Promise<void>;
  output(): string;
}

const MAIN = fileURLToPath(new URL('./vrrp-node-main.js', import.meta.url));

/** `readyMs`: how long its start may take (hundreds of instances, each removing a stale VIP, on a loaded host: more). */
export async function startLvsdNode(ns: Netns, options: VrrpOptions, readyMs = 15_000): Promise<LvsdNode> {
  const child = ns.spawn(process.execPath, [MAIN, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const transitions: (TransitionEvent & { mono: number })[] = [];
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  let buf = '';
  const waiters = new Set<() => void>();
  const exited = new Promise<void>((r) => child.once('exit', () => { r(); }));
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const w of waiters) w();
  });
  child.stdout?.on('data', (d: Buffer) => {
    raw += d.toString();
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        lines.push(o);
        if (o.kind === 'transition') transitions.push(o as unknown as TransitionEvent & { mono: number });
      } catch {
        /* not ours */
      }
    }
    for (const w of waiters) w();
  });
  child.stderr?.on('data', (d: Buffer) => {
    raw += d.toString();
  });
  const waitLine = (pred: (l: Record<string, unknown>) => boolean, timeoutMs = 10_000, from = 0): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      let idx = from;
      const check = (): void => {
        for (; idx < lines.length; idx++) {
          const l = lines[idx];
          if (l !== undefined && pred(l)) {
            done();
            resolve(l);
            return;
          }
        }
        if (gone) {
          done();
          reject(new Error(`lvsd node in ${ns.name} exited; output:\n${raw}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`lvsd node in ${ns.name}: timed out after ${timeoutMs} ms; output:\n${raw.split("\n").filter((l) => !l.includes(`"kind":"ready"`)).join("\n").slice(-4000)}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  await waitLine((l) => l.kind === 'ready', readyMs);
  return {
    child,
    transitions,
    lines,
    waitState: async (instance, state, timeoutMs = 10_000, since = 0) =>
      (await waitLine((l) => l.kind === 'transition' && l.instance === instance && l.to === state && Number(l.mono) >= since, timeoutMs)) as unknown as TransitionEvent & { mono: number },
    waitLine: (pred, timeoutMs) => waitLine(pred, timeoutMs),
    state: (instance) => transitions.filter((t) => t.instance === instance).at(-1)?.to,
    snapshot: async () => {
      const from = lines.length;
      child.stdin?.write('snapshot\n');
      const l = await waitLine((x) => x.kind === 'snapshot', 5000, from);
      return l.snapshot as VrrpSnapshot;
    },
    command: (line) => {
      child.stdin?.write(line + '\n');
    },
    stop: async () => {
      if (gone) return;
      child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      if (gone) return;
      crashTree(child.pid ?? 0);
      await exited;
    },
    output: () => raw,
  };
}
