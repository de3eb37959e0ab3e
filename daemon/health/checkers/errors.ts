// Socket and TLS errors → the short failure reasons the rest of lvsd speaks.
import { fail, type CheckVerdict, type FailReason } from '../types.js';

const BY_CODE: Readonly<Record<string, FailReason>> = {
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENETDOWN: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
};

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_SSL') ||
    code.startsWith('ERR_TLS') ||
    code.startsWith('CERT_') ||
    code.includes('CERT') ||
    code.startsWith('UNABLE_TO_') ||
    code === 'HOSTNAME_MISMATCH'
  );
}

export function verdictFromError(err: unknown): CheckVerdict {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  const reason = BY_CODE[code];
  if (reason !== undefined) return fail(reason, code);
  if (code !== '' && isTlsCode(code)) return fail('tls', code);
  return fail('error', code !== '' ? `${code}: ${message}` : message);
}
