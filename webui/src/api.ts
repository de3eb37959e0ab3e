// fetch() for the lvsd API: JSON in and out, the CSRF token on state-changing calls, errors as ApiError
// carrying the server's message (which names what was wrong).
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: string[],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken = '';

export function setCsrf(token: string): void {
  csrfToken = token;
}

interface ErrorBody {
  message?: string;
  details?: string[];
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? null : JSON.stringify(body) });
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const e = (data ?? {}) as ErrorBody;
    throw new ApiError(res.status, e.message ?? res.statusText, e.details ?? []);
  }
  return data as T;
}

export const enc = encodeURIComponent;

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.details.length > 1 ? `${e.message}: ${e.details.join('; ')}` : e.message;
  return e instanceof Error ? e.message : String(e);
}
