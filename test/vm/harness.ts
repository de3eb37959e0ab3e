// A real IPVS kernel for tests: Debian's kernel in a QEMU guest (TCG), booted from a tiny initramfs
// that mounts the host's / read-only over 9p under a tmpfs overlay, so the guest sees every program
// the host has (node, ipvsadm, keepalived, nginx, iproute2) and the project directory read-write.
// Measured recipe: /work/shared/notes/test-vm.md. Boot → run → power-off takes ~4 s.
//
//   const r = await runInGuest({ command: 'ipvsadm -Ln', timeoutMs: 60_000 });
//   r.status, r.stdout, r.stderr
//
// prepareGuest() installs what is missing (apt-get), downloads the kernel .deb once (apt-get download)
// and caches everything under <repo>/.cache/vm/ (gitignored). Concurrent runs are fine (one control
// directory per run).
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { parseReport } from './guest/checks.js';
import { requireRoot } from '../support/prereq.js';

const run = promisify(execFile);

/** The repository root (this file is test/vm/harness.ts, compiled to dist/test/vm/harness.js). */
export const REPO_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('harness: cannot find the repository root (no package.json above)');
    dir = up;
  }
  return dir;
})();
export const CACHE_DIR = process.env.LVSD_VM_CACHE ?? join(REPO_ROOT, '.cache', 'vm');

const HOST_PACKAGES = ['qemu-system-x86', 'busybox-static', 'ipvsadm', 'keepalived', 'iproute2', 'kmod', 'xz-utils'];
// Loaded by stage 1 in this order (dependencies first): enough to mount 9p and overlayfs.
const STAGE1_MODULES = ['virtio_ring', 'virtio', 'virtio_pci_modern_dev', 'virtio_pci_legacy_dev', 'virtio_pci', 'netfs', 'fscache', '9pnet', '9pnet_virtio', '9p', 'overlay'];

export interface GuestImage {
  kernelVersion: string;
  /** Uncompressed kernel (ELF, booted via PVH: 1.7 s to /init instead of 5.2 s). */
  vmlinux: string;
  initramfs: string;
  /** Unpacked module tree root (contains lib/modules/VERSION). */
  moduleRoot: string;
}

export interface GuestRunOptions {
  /** Shell command run by /bin/sh -c in the guest, in the repository directory. */
  command: string;
  /** Kill the guest after this long (default 120 s). The result then has timedOut: true. */
  timeoutMs?: number;
  /** Modules to modprobe before the command (default: ip_vs and its schedulers, ipip, veth, bridge, dummy). */
  modules?: string[];
  memoryMb?: number;
  cpus?: number;
  /** Extra environment for the command. */
  env?: Record<string, string>;
  /** The command's stdout as it grows (polled every 250 ms), for a live display; the result still has all of it. */
  onStdout?: (text: string) => void;
  /** Called once the guest runs, with `poke(name)`: it creates /run/lvsd-ctl/NAME in the guest (the control
   * share has no cache), the one way for the host to tell a running guest something. */
  onRunning?: (poke: (name: string) => void) => void;
}

export interface GuestResult {
  status: number;
  stdout: string;
  stderr: string;
  /** Kernel console (boot messages, panics): look here when status is -1. */
  console: string;
  timedOut: boolean;
  durationMs: number;
}

export const DEFAULT_GUEST_MODULES = [
  'ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_lc', 'ip_vs_wlc', 'ip_vs_lblc', 'ip_vs_lblcr', 'ip_vs_dh', 'ip_vs_sh',
  'ip_vs_sed', 'ip_vs_nq', 'ip_vs_fo', 'ip_vs_ovf', 'ip_vs_mh', 'ip_vs_twos', 'ipip', 'veth', 'bridge', 'dummy', 'nf_conntrack', 'ip_vs_pe_sip', 'ipvlan',
];

function log(msg: string): void {
  process.stderr.write(`[vm-harness] ${msg}\n`);
}

async function sh(script: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  const { stdout } = await run('sh', ['-c', script], { cwd: opts.cwd, timeout: opts.timeoutMs ?? 600_000, maxBuffer: 64 << 20 });
  return stdout;
}

async function ensureHostPackages(): Promise<void> {
  const missing: string[] = [];
  for (const p of HOST_PACKAGES) {
    const status = await sh(`dpkg-query -W -f='\${Status}' ${p} 2>/dev/null || true`);
    if (status.trim() !== 'install ok installed') missing.push(p);
  }
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`vm harness: missing Debian packages ${missing.join(' ')} and not root to install them`);
  log(`installing ${missing.join(' ')}`);
  await sh(`export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q --no-install-recommends ${missing.join(' ')}`);
}

/** The kernel package apt would install for linux-image-amd64 (e.g. linux-image-6.1.0-57-amd64). */
async function kernelPackage(): Promise<string> {
  const override = process.env.LVSD_VM_KERNEL_PACKAGE;
  if (override !== undefined && override !== '') return override;
  const depends = async (): Promise<string | undefined> =>
    /Depends:\s*(linux-image-[0-9][^\s]*-amd64)/.exec(await sh('apt-cache depends linux-image-amd64 2>/dev/null || true'))?.[1];
  const found = await depends();
  if (found !== undefined) return found;
  // No apt metadata (offline): use the newest kernel already in the cache.
  const cached = existsSync(CACHE_DIR) ? readdirSync(CACHE_DIR).filter((d) => d.startsWith('kernel-')).sort() : [];
  const last = cached.at(-1);
  if (last !== undefined) return `linux-image-${last.slice('kernel-'.length)}`;
  // A fresh machine may have empty apt lists: fetch them once and ask again.
  if (process.getuid?.() === 0) {
    log('apt lists are empty: apt-get update');
    await sh('apt-get update -q');
    const again = await depends();
    if (again !== undefined) return again;
  }
  throw new Error('vm harness: cannot tell which kernel to download (apt-cache depends linux-image-amd64 gave nothing; run apt-get update)');
}

/** Finds the xz payload inside a bzImage and decompresses it to an ELF vmlinux. */
async function extractVmlinux(vmlinuz: string, out: string): Promise<void> {
  const buf = readFileSync(vmlinuz);
  const magic = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);
  let at = buf.indexOf(magic);
  while (at >= 0) {
    const tmp = `${out}.xz`;
    writeFileSync(tmp, buf.subarray(at));
    try {
      // --single-stream: the bzImage carries trailing bytes after the payload.
      await sh(`xz -dc --single-stream '${tmp}' > '${out}.part'`);
      const head = Buffer.alloc(4);
      const fd = openSync(`${out}.part`, 'r');
      readSync(fd, head, 0, 4, 0);
      closeSync(fd);
      if (head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
        renameSync(`${out}.part`, out);
        rmSync(tmp, { force: true });
        return;
      }
    } catch {
      /* not this one: try the next magic */
    } finally {
      rmSync(tmp, { force: true });
    }
    at = buf.indexOf(magic, at + 1);
  }
  throw new Error(`vm harness: no xz-compressed ELF kernel found inside ${vmlinuz}`);
}

// ---- initramfs (cpio "newc", written here: no cpio binary needed) ----

interface CpioEntry {
  name: string;
  mode: number;
  data?: Buffer;
  rdev?: [number, number];
}

function cpioNewc(entries: CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  const pad4 = (n: number): Buffer => Buffer.alloc((4 - (n % 4)) % 4);
  const push = (e: CpioEntry): void => {
    const data = e.data ?? Buffer.alloc(0);
    const name = Buffer.from(`${e.name}\0`);
    const f = (n: number): string => n.toString(16).padStart(8, '0');
    const isDir = (e.mode & 0o170000) === 0o040000;
    const hdr = `070701${f(ino++)}${f(e.mode)}${f(0)}${f(0)}${f(isDir ? 2 : 1)}${f(0)}${f(data.length)}${f(0)}${f(0)}${f(e.rdev?.[0] ?? 0)}${f(e.rdev?.[1] ?? 0)}${f(name.length)}${f(0)}`;
    parts.push(Buffer.from(hdr), name, pad4(110 + name.length), data, pad4(data.length));
  };
  for (const e of entries) push(e);
  push({ name: 'TRAILER!!!', mode: 0 });
  return Buffer.concat(parts);
}

const STAGE1 = `#!/bin/busybox sh
# Stage 1: load virtio/9p/overlay, build a writable root = host / (9p, read-only) + tmpfs, switch to it.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /lib/mod/$m.ko || echo "stage1: insmod $m failed"; done
P9=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /rw /newroot
mount -t 9p -o $P9,cache=loose,ro root /lower || { echo "stage1: cannot mount host root"; poweroff -f; }
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot
PROJECT=$(cat /project.path)
KVER=$(cat /kernel.version)
# Fresh /run and /tmp first: the project may live under /tmp on the host, and must not be hidden.
mount -t tmpfs -o mode=0755 tmpfs /newroot/run
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mkdir -p /newroot$PROJECT
mount -t 9p -o $P9,cache=mmap project /newroot$PROJECT
mkdir -p /newroot/run/lvsd-ctl /newroot/lib/modules/$KVER
mount -t 9p -o $P9,cache=none ctl /newroot/run/lvsd-ctl
mount --bind /newroot$(cat /module.root)/lib/modules/$KVER /newroot/lib/modules/$KVER
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup 2>/dev/null
exec switch_root /newroot /bin/sh /run/lvsd-ctl/stage2.sh
`;

function stage2(opts: GuestRunOptions, modules: string[]): string {
  const env = Object.entries(opts.env ?? {})
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'`)
    .join('\n');
  return `#!/bin/sh
# Stage 2 (in the overlay root): clock, modules, the command, its exit status, power-off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LVSD_IN_GUEST=1
CTL=/run/lvsd-ctl
# The RTC has 1 s granularity; a file created on the host share carries the host's clock.
: > $CTL/clock && date -s "@$(date -r $CTL/clock +%s.%N)" >/dev/null 2>&1
ip link set lo up
modprobe -a ${modules.join(' ')} 2>$CTL/modprobe.err
mkdir -p /var/run /var/lib /var/log /var/tmp
${env}
cd '${REPO_ROOT}'
/bin/sh -c "$(cat $CTL/command)" >$CTL/stdout 2>$CTL/stderr </dev/null
echo $? > $CTL/status.tmp && mv $CTL/status.tmp $CTL/status
sync
echo o > /proc/sysrq-trigger
sleep 10
`;
}

let preparing: Promise<GuestImage> | undefined;

/** Installs and caches everything the guest needs; idempotent and safe to call from every test. */
export function prepareGuest(): Promise<GuestImage> {
  preparing ??= doPrepare();
  return preparing;
}

async function doPrepare(): Promise<GuestImage> {
  await ensureHostPackages();
  const pkg = await kernelPackage();
  const kver = pkg.replace(/^linux-image-/, '');
  const dir = join(CACHE_DIR, `kernel-${kver}`);
  const ready = join(dir, 'ready');
  const image: GuestImage = { kernelVersion: kver, vmlinux: join(dir, 'vmlinux'), initramfs: join(dir, 'initramfs.cpio'), moduleRoot: join(dir, 'root') };
  // The marker names what the initramfs was built from: a changed stage 1 rebuilds it (not the download).
  const marker = `${REPO_ROOT}\n${createHash('sha256').update(STAGE1 + STAGE1_MODULES.join(',')).digest('hex')}`;
  if (existsSync(ready) && readFileSync(ready, 'utf8') === marker) return image;

  const t0 = Date.now();
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(image.moduleRoot, 'lib', 'modules', kver, 'modules.dep'))) {
    log(`downloading ${pkg} (once; cached in ${dir})`);
    const dl = join(dir, 'dl');
    rmSync(dl, { recursive: true, force: true });
    mkdirSync(dl, { recursive: true });
    await sh(`apt-get download -q ${pkg} 2>&1 | grep -v 'unsandboxed' || true`, { cwd: dl });
    const deb = readdirSync(dl).find((f) => f.endsWith('.deb'));
    if (deb === undefined) throw new Error(`vm harness: apt-get download ${pkg} produced no .deb (no network to the Debian mirror?)`);
    rmSync(image.moduleRoot, { recursive: true, force: true });
    await sh(`dpkg-deb -x '${join(dl, deb)}' '${image.moduleRoot}'`);
    rmSync(dl, { recursive: true, force: true });
    await sh(`depmod -b '${image.moduleRoot}' ${kver}`);
  }
  if (!existsSync(image.vmlinux)) await extractVmlinux(join(image.moduleRoot, 'boot', `vmlinuz-${kver}`), image.vmlinux);

  // Stage-1 modules with their paths from modules.dep.
  const modDir = join(image.moduleRoot, 'lib', 'modules', kver);
  const dep = readFileSync(join(modDir, 'modules.dep'), 'utf8');
  const pathOf = new Map<string, string>();
  for (const line of dep.split('\n')) {
    const path = line.split(':')[0];
    if (path === undefined || path === '') continue;
    const base = path.split('/').pop()?.replace(/\.ko(\.[a-z]+)?$/, '') ?? '';
    pathOf.set(base.replace(/-/g, '_'), path);
  }
  const builtin = readFileSync(join(modDir, 'modules.builtin'), 'utf8');
  const entries: CpioEntry[] = [];
  const dirs = ['bin', 'dev', 'proc', 'sys', 'lib', 'lib/mod', 'lower', 'rw', 'newroot'];
  for (const d of dirs) entries.push({ name: d, mode: 0o040755 });
  entries.push({ name: 'dev/console', mode: 0o020600, rdev: [5, 1] });
  entries.push({ name: 'bin/busybox', mode: 0o100755, data: readFileSync('/bin/busybox') });
  entries.push({ name: 'init', mode: 0o100755, data: Buffer.from(STAGE1) });
  const order: string[] = [];
  for (const m of STAGE1_MODULES) {
    const p = pathOf.get(m.replace(/-/g, '_'));
    if (p === undefined) {
      if (new RegExp(`/${m}\\.ko`).test(builtin)) continue; // built into this kernel
      throw new Error(`vm harness: module ${m} is neither in modules.dep nor built in (${kver})`);
    }
    if (p.endsWith('.xz') || p.endsWith('.zst')) throw new Error(`vm harness: compressed module ${p} is not supported by busybox insmod`);
    entries.push({ name: `lib/mod/${m}.ko`, mode: 0o100644, data: readFileSync(join(modDir, p)) });
    order.push(m);
  }
  entries.push({ name: 'modules.order', mode: 0o100644, data: Buffer.from(order.join('\n') + '\n') });
  entries.push({ name: 'project.path', mode: 0o100644, data: Buffer.from(REPO_ROOT) });
  entries.push({ name: 'kernel.version', mode: 0o100644, data: Buffer.from(kver) });
  entries.push({ name: 'module.root', mode: 0o100644, data: Buffer.from(image.moduleRoot) });
  writeFileSync(image.initramfs, cpioNewc(entries));
  writeFileSync(ready, marker);
  log(`guest image ready in ${Date.now() - t0} ms (kernel ${kver})`);
  return image;
}

/** Boots a guest, runs `command` in it, powers it off; never throws for a failing command. */
export async function runInGuest(opts: GuestRunOptions): Promise<GuestResult> {
  const image = await prepareGuest();
  const ctl = mkdtempSync(join(tmpdir(), 'lvsd-vm-'));
  const t0 = Date.now();
  try {
    writeFileSync(join(ctl, 'command'), opts.command);
    writeFileSync(join(ctl, 'stage2.sh'), stage2(opts, opts.modules ?? DEFAULT_GUEST_MODULES));
    const args = [
      '-M', 'pc', '-accel', 'tcg,thread=multi', '-cpu', 'max', '-smp', String(opts.cpus ?? 2), '-m', String(opts.memoryMb ?? 1024),
      '-display', 'none', '-nodefaults', '-no-user-config', '-no-reboot',
      ...(existsSync('/usr/share/qemu/qboot.rom') ? ['-bios', '/usr/share/qemu/qboot.rom'] : []),
      '-kernel', image.vmlinux, '-initrd', image.initramfs,
      '-append', 'console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable no_timer_check mitigations=off rdinit=/init',
      '-virtfs', 'local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap',
      '-virtfs', `local,path=${REPO_ROOT},mount_tag=project,security_model=none,multidevs=remap`,
      '-virtfs', `local,path=${ctl},mount_tag=ctl,security_model=none,multidevs=remap`,
      '-serial', `file:${join(ctl, 'console.log')}`,
    ];
    const timeoutMs = opts.timeoutMs ?? 120_000;
    let timedOut = false;
    const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let qemuErr = '';
    child.stderr.on('data', (d: Buffer) => {
      qemuErr += d.toString();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    // Killing the test process must not leave a guest running.
    const onExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', onExit);
    opts.onRunning?.((name) => { writeFileSync(join(ctl, name.replace(/[^a-z0-9-]/gi, '')), ''); });
    let shown = 0;
    const follow = opts.onStdout === undefined ? undefined : setInterval(() => {
      const text = existsSync(join(ctl, 'stdout')) ? readFileSync(join(ctl, 'stdout'), 'utf8') : '';
      if (text.length > shown) opts.onStdout?.(text.slice(shown));
      shown = Math.max(shown, text.length);
    }, 250);
    await new Promise<void>((res) => {
      child.once('exit', () => {
        res();
      });
    });
    clearTimeout(timer);
    clearInterval(follow);
    process.removeListener('exit', onExit);
    const read = (f: string): string => (existsSync(join(ctl, f)) ? readFileSync(join(ctl, f), 'utf8') : '');
    const statusText = read('status').trim();
    const status = statusText === '' ? -1 : Number(statusText);
    const consoleText = read('console.log') + (qemuErr === '' ? '' : `\n[qemu] ${qemuErr}`);
    if (opts.onStdout !== undefined && read('stdout').length > shown) opts.onStdout(read('stdout').slice(shown));
    const result: GuestResult = { status, stdout: read('stdout'), stderr: read('stderr'), console: consoleText, timedOut, durationMs: Date.now() - t0 };
    const modErr = read('modprobe.err').trim();
    if (modErr !== '') result.stderr = `[modprobe] ${modErr}\n${result.stderr}`;
    return result;
  } finally {
    rmSync(ctl, { recursive: true, force: true });
  }
}

/** runInGuest, but throws with the guest's output when the command fails: handy in tests. */
export async function runInGuestOk(opts: GuestRunOptions): Promise<GuestResult> {
  const r = await runInGuest(opts);
  if (r.status !== 0) {
    throw new Error(
      `guest command failed (status ${r.status}${r.timedOut ? ', timed out' : ''}, ${r.durationMs} ms): ${opts.command}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}\n--- console\n${r.console.slice(-3000)}`,
    );
  }
  return r;
}

/** Path of a compiled file under dist/, as the guest sees it (same path as on the host). */
export function distPath(...parts: string[]): string {
  const p = resolve(REPO_ROOT, 'dist', ...parts);
  if (!existsSync(p)) throw new Error(`${p} does not exist: build first (npx tsc -p tsconfig.json)`);
  statSync(p);
  return p;
}

/**
 * Boots the guest once to run a compiled guest script that reports checks (test/vm/guest/checks.ts), and
 * turns each reported check into a subtest of `t`.
 */
export async function guestChecks(t: TestContext, script: string, timeoutMs = 240_000, opts: Pick<GuestRunOptions, 'memoryMb' | 'cpus' | 'env' | 'modules'> = {}): Promise<void> {
  requireRoot();
  const r = await runInGuest({ ...opts, command: `node ${distPath(script)}`, timeoutMs });
  t.diagnostic(`guest run: ${r.durationMs} ms, status ${r.status}`);
  if (r.status !== 0 && !r.stdout.includes('@@LVSD-VM-REPORT@@')) {
    assert.fail(`guest failed before reporting (status ${r.status}, timed out: ${r.timedOut})\n${r.stderr.slice(-3000)}\n${r.console.slice(-2000)}`);
  }
  for (const c of parseReport(r.stdout)) {
    await t.test(c.name, (st) => {
      st.diagnostic(`${c.ms} ms in the guest${c.ok && c.detail !== undefined ? `: ${c.detail.split('\n').slice(0, 3).join(' | ')}` : ''}`);
      assert.ok(c.ok, c.detail);
    });
  }
  assert.equal(r.status, 0, r.stderr.slice(-3000));
}
