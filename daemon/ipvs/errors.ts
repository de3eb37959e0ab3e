// IPVS failures as typed values: which errno, which command, which object.
import { constants } from 'node:os';

/** Errno names the kernel's IPVS code returns, with what they mean for IPVS. */
export const IPVS_ERRNO_MEANING: Readonly<Record<string, string>> = {
  EEXIST: 'already exists',
  ENOENT: 'no such scheduler, persistence engine or destination',
  ESRCH: 'no such service',
  EINVAL: 'invalid argument',
  EBUSY: 'busy (sync daemon already running)',
  EPERM: 'not permitted (needs CAP_NET_ADMIN)',
  ENOMEM: 'out of memory',
  EAFNOSUPPORT: 'address family not supported',
  EOPNOTSUPP: 'not supported by this kernel',
  ERANGE: 'value out of range',
};

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([k, v]) => [v, k]));

export class IpvsError extends Error {
  override readonly name = 'IpvsError';
  constructor(
    /** "EEXIST", "ESRCH", … */
    readonly code: string,
    readonly errno: number,
    /** The IPVS command, e.g. "NEW_SERVICE". */
    readonly command: string,
    /** The object the command was about, e.g. "tcp:10.0.0.1:80 → 10.0.1.1:80". */
    readonly object: string,
  ) {
    super(`IPVS ${command} ${object}: ${code} (${IPVS_ERRNO_MEANING[code] ?? 'kernel error'})`);
  }

  static fromErrno(errno: number, command: string, object: string): IpvsError {
    const n = Math.abs(errno);
    return new IpvsError(ERRNO_NAMES.get(n) ?? `errno ${n}`, n, command, object);
  }
}

/** The kernel has no IPVS (no family "IPVS" and the module could not be loaded). */
export class IpvsUnavailable extends Error {
  override readonly name = 'IpvsUnavailable';
  constructor(readonly reason: string) {
    super(`IPVS is not available: ${reason}`);
  }
}

export function isIpvsError(e: unknown, code?: string): e is IpvsError {
  return e instanceof IpvsError && (code === undefined || e.code === code);
}
