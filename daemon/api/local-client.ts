// A tiny client for the local admin socket, for the CLI (`lvsd status`, `lvsd reload`, `lvsd user add`).
// The socket is trusted as admin, so no login and no CSRF token are needed.
import { request } from 'node:http';

export const STATUS_ROUTE = '/api/v1/status';

export interface LocalResponse<T> {
  status: number;
  body: T;
}

export class LocalApiError extends Error {
  constructor(
    readonly socket: string,
    /** HTTP status, or 0 when the socket could not be reached (then `code` is the errno code). */
    readonly status: number,
    message: string,
    /** The API's `details` lines (every error of a refused config, say), when it sent some. */
    readonly details: readonly string[] = [],
    readonly code?: string,
  ) {
    super(`${socket}: ${message}`);
    this.name = 'LocalApiError';
  }
}

/** Calls the API over the unix socket; rejects with LocalApiError on 4xx/5xx or when nothing listens. */
export function localRequest<T>(socket: string, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<LocalResponse<T>> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = request({ socketPath: socket, method, path, headers, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        let parsed: unknown = null;
        try {
          parsed = text === '' ? null : JSON.parse(text);
        } catch {
          reject(new LocalApiError(socket, status, `answer is not JSON: ${text.slice(0, 200)}`));
          return;
        }
        if (status >= 400) {
          const { message: msg, details } = (parsed ?? {}) as { message?: unknown; details?: unknown };
          const lines = Array.isArray(details) ? details.filter((d): d is string => typeof d === 'string') : [];
          reject(new LocalApiError(socket, status, `${method} ${path}: ${status} ${typeof msg === 'string' ? msg : text.slice(0, 500)}`.trim(), lines));
          return;
        }
        resolve({ status, body: parsed as T });
      });
    });
    req.on('timeout', () => { req.destroy(new Error(`no answer within ${timeoutMs} ms`)); });
    req.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'ENOENT' || e.code === 'ECONNREFUSED' ? 'lvsd is not running (no API socket)' : e.code === 'EACCES' ? 'permission denied (run as root)' : e.message;
      reject(new LocalApiError(socket, 0, why, [], e.code));
    });
    req.end(payload);
  });
}
