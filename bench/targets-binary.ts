// Builds bench/health-targets.c (the benchmark's epoll target server) into dist/bench/ with the C
// compiler node-gyp uses anyway; rebuilt when the source is newer. Called on the host before the
// QEMU guest boots, so the guest (which sees this tree over 9p) finds it ready.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** What every target answers (health-targets.c's RESPONSE): the `digest` checks compare its md5. */
export const TARGET_BODY = 'ok\n';
export const TARGET_BODY_MD5 = createHash('md5').update(TARGET_BODY).digest('hex');

/** The benchmark's check kinds: TCP connect, HTTP status, HTTP status + md5 of the body (keepalived's `digest`), ICMP echo, SMTP banner/HELO/QUIT. */
export type BenchCheck = 'tcp' | 'http' | 'digest' | 'ping' | 'smtp';

/** The ping benchmark's target `i`: one address each (ICMP has no ports), 10.81.0.0/16 (bench/ping-targets.ts). */
export function pingTargetAddress(i: number): string {
  return `10.81.${i >> 8}.${i & 255}`;
}

export function targetsBinary(): string {
  const out = join(here, 'health-targets');
  const src = resolve(here, '..', '..', 'bench', 'health-targets.c');
  if (!existsSync(src)) throw new Error(`health bench: target server source missing: ${src}`);
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs) {
    try {
      execFileSync(process.env.CC ?? 'cc', ['-O2', '-Wall', '-Wextra', '-o', out, src], { stdio: ['ignore', 'inherit', 'inherit'] });
    } catch (e) {
      throw new Error(`health bench: cannot compile ${src} (needs a C compiler, as node-gyp does): ${(e as Error).message}`);
    }
  }
  return out;
}
