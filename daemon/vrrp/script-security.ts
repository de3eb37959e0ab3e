// Who a notify or track script runs as, and whether it may run at all: keepalived's script_user and
// enable_script_security (lib/notify.c, check_script_secure / check_security, read in 2.2.7's source):
//   - a script runs as its own user (vrrp_script `user`, `notify_master "/x" user`), else script_user, else
//     the daemon's own user (keepalived would try keepalived_script first; lvsd has no such default user);
//   - it must be executable by that user, else it is disabled;
//   - only a script that runs as root (uid or gid 0) or is set-uid/set-gid root is checked further: every
//     part of its path as written, and of its real path when a symlink leads elsewhere, must be owned by
//     root, and no file or directory without the sticky bit may be writable by a non-root group or by
//     everyone. An unsafe one is disabled with scriptSecurity, else it runs and is reported as unsafe.
// The checks are pure over a small file-system interface (tests give a table of paths); the real one reads
// the disk with lstat, which does not follow the last link, as keepalived's fstatat(AT_SYMLINK_NOFOLLOW).
import { lstatSync, realpathSync, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface FileInfo {
  uid: number;
  gid: number;
  /** st_mode: type and permission bits. */
  mode: number;
}

export interface ScriptFs {
  /** Does not follow a final symlink; null when the path does not exist. */
  lstat(path: string): FileInfo | null;
  /** Follows links; null when it does not exist. */
  stat(path: string): FileInfo | null;
  realpath(path: string): string | null;
}

export interface Identity {
  uid: number;
  gid: number;
  /** As the operator wrote it, for messages ("nobody", "lvsd:adm"); absent = the daemon's own user. */
  name?: string;
}

export type Verdict =
  | { run: true; path: string; unsafe?: string }
  | { run: false; reason: string };

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const type = (m: number): number => m & S_IFMT;

/** /etc/passwd and /etc/group text → "user" or "user:group" → ids; a missing name is an error naming it. */
export function lookupIdentity(spec: string, passwd: string, group: string): Identity | { error: string } {
  const [user = '', grp] = spec.split(':');
  const pw = passwd.split('\n').map((l) => l.split(':')).find((f) => f[0] === user);
  if (pw === undefined) return { error: `script user ${user} does not exist` };
  let gid = Number(pw[3]);
  if (grp !== undefined && grp !== '') {
    const g = group.split('\n').map((l) => l.split(':')).find((f) => f[0] === grp);
    if (g === undefined) return { error: `script group ${grp} does not exist` };
    gid = Number(g[2]);
  }
  return { uid: Number(pw[2]), gid, name: spec };
}

/** The mode bits that let uid:gid execute a file (root: any x bit, as the kernel). */
function executableBy(f: FileInfo, who: Identity): boolean {
  if (who.uid === 0) return (f.mode & 0o111) !== 0;
  if (f.uid === who.uid) return (f.mode & 0o100) !== 0;
  if (f.gid === who.gid) return (f.mode & 0o010) !== 0;
  return (f.mode & 0o001) !== 0;
}

/** The first part of `path` (from "/" down to the file) that a non-root user could change, or null. */
export function unsafePart(path: string, fs: ScriptFs): string | null {
  const parts = path.split('/').filter((p) => p !== '');
  const prefixes = ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`)];
  for (const [i, p] of prefixes.entries()) {
    const f = fs.lstat(p);
    if (f === null) return `${p} does not exist`;
    const last = i === prefixes.length - 1;
    if (!last && type(f.mode) !== S_IFDIR) return `${p} is not a directory`;
    if (last && type(f.mode) !== S_IFREG && type(f.mode) !== S_IFLNK) return `${p} is not a file`;
    if (f.uid !== 0) return `${p} is owned by uid ${f.uid}, not root`;
    const checked = (type(f.mode) === S_IFDIR && (f.mode & 0o1000) === 0) || type(f.mode) === S_IFREG;
    if (checked && f.gid !== 0 && (f.mode & 0o020) !== 0) return `${p} is writable by group ${f.gid}`;
    if (checked && (f.mode & 0o002) !== 0) return `${p} is writable by everyone`;
  }
  return null;
}

/**
 * Whether `program` (a path, or a bare name looked up in PATH) may run as `who`, keepalived's rules
 * (header). `security` is enable_script_security.
 */
export function checkScript(program: string, who: Identity, security: boolean, fs: ScriptFs, path = process.env.PATH ?? ''): Verdict {
  let given = program;
  if (!program.includes('/')) {
    const found = path.split(delimiter).filter((d) => d !== '').map((d) => join(d, program)).find((c) => { const f = fs.stat(c); return f !== null && type(f.mode) === S_IFREG; });
    if (found === undefined) return { run: false, reason: `${program} not found in PATH` };
    given = found;
  }
  const real = fs.realpath(given);
  const f = real === null ? null : fs.stat(real);
  if (real === null || f === null) return { run: false, reason: `${given} cannot be accessed` };
  const user = who.name ?? `uid ${who.uid}`;
  if (!executableBy(f, who)) return { run: false, reason: `${given} is not executable for ${user} (${who.uid}:${who.gid})` };
  const setRoot = (f.uid === 0 && (f.mode & 0o4100) === 0o4100) || (f.gid === 0 && (f.mode & 0o2010) === 0o2010);
  if (who.uid !== 0 && who.gid !== 0 && !setRoot) return { run: true, path: given };
  const unsafe = unsafePart(given, fs) ?? (real !== given ? unsafePart(real, fs) : null);
  if (unsafe === null) return { run: true, path: given };
  if (security) return { run: false, reason: `unsafe permissions: ${unsafe} (enable_script_security)` };
  return { run: true, path: given, unsafe };
}

/** The disk, for the daemon. */
export const diskFs: ScriptFs = {
  lstat: (p) => {
    try {
      const s = lstatSync(p);
      return { uid: s.uid, gid: s.gid, mode: s.mode };
    } catch {
      return null;
    }
  },
  stat: (p) => {
    try {
      const s = statSync(p);
      return { uid: s.uid, gid: s.gid, mode: s.mode };
    } catch {
      return null;
    }
  },
  realpath: (p) => {
    try {
      return realpathSync(p);
    } catch {
      return null;
    }
  },
};

/**
 * The daemon's gate for one script run: its identity (own user ⊕ script_user ⊕ the daemon's) and the
 * verdict. Reads /etc/passwd and /etc/group each time, so a user added later is found at the next run.
 */
export function gateScript(program: string, user: string | undefined, security: boolean, fs: ScriptFs = diskFs): { who: Identity; verdict: Verdict } | { who: null; verdict: { run: false; reason: string } } {
  let who: Identity = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  if (user !== undefined && user !== '') {
    const read = (f: string): string => {
      try {
        return readFileSync(f, 'utf8');
      } catch {
        return '';
      }
    };
    const id = lookupIdentity(user, read('/etc/passwd'), read('/etc/group'));
    if ('error' in id) return { who: null, verdict: { run: false, reason: id.error } };
    who = id;
  }
  return { who, verdict: checkScript(program, who, security, fs) };
}
