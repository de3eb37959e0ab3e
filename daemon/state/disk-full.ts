// A write refused for want of room (ENOSPC, EDQUOT): one error for the state file and the config file alike,
// so the API can answer 507 naming the file instead of a bare 500. The writers go through a temp file and a
// rename, so what was on disk is still there whole when this is thrown.
export class DiskFullError extends Error {
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    super(`${file}: cannot write it (${code}: no space left on the device); the file on disk is unchanged and so is what lvsd runs — free some space and try again`);
    this.name = 'DiskFullError';
  }
}

/** `e` as a DiskFullError for `file` when it is one of the errno codes of a full disk, else `e` itself. */
export function diskFull(file: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? new DiskFullError(file, code) : e;
}
