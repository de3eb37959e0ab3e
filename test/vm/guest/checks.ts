// Guest-side check collector: each check runs, records pass/fail with detail, and the script prints
// one JSON report the host-side node:test file turns into one subtest per check.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CheckResult {
  name: string;
  ok: boolean;
  ms: number;
  detail?: string;
}

export const REPORT_MARK = '@@LVSD-VM-REPORT@@';

export class Checks {
  readonly results: CheckResult[] = [];

  async check(name: string, fn: () => Promise<unknown>): Promise<void> {
    const t0 = Date.now();
    try {
      const detail = await fn();
      this.results.push({ name, ok: true, ms: Date.now() - t0, ...(typeof detail === 'string' ? { detail } : {}) });
    } catch (e) {
      this.results.push({ name, ok: false, ms: Date.now() - t0, detail: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    }
    const last = this.results.at(-1);
    // A failure's reason at once too (the report comes only at the end of a long guest run).
    process.stderr.write(`[guest] ${last?.ok === true ? 'ok  ' : 'FAIL'} ${name} (${Date.now() - t0} ms)${last?.ok === false ? `\n${(last.detail ?? '').slice(0, 2000)}` : ''}\n`);
  }

  /** Prints the report and exits 0 when every check passed. */
  finish(): never {
    process.stdout.write(`${REPORT_MARK}${JSON.stringify(this.results)}\n`);
    process.exit(this.results.every((r) => r.ok) ? 0 : 1);
  }
}

export async function sh(script: string, timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run('sh', ['-c', script], { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return stdout;
  } catch (e) {
    const x = e as { stderr?: string; stdout?: string; message: string };
    throw new Error(`command failed: ${script}\n${x.message}\n${x.stderr ?? ''}${x.stdout ?? ''}`);
  }
}

export function parseReport(stdout: string): CheckResult[] {
  const line = stdout.split('\n').find((l) => l.startsWith(REPORT_MARK));
  if (line === undefined) throw new Error(`the guest printed no report:\n${stdout.slice(-3000)}`);
  return JSON.parse(line.slice(REPORT_MARK.length)) as CheckResult[];
}

/** ipvsadm -Sn lines, sorted, blank lines dropped: a stable image of the kernel table. */
export async function ipvsadmSave(prefix = ''): Promise<string[]> {
  return (await sh(`${prefix}ipvsadm -Sn`)).split('\n').filter((l) => l.trim() !== '').sort();
}
