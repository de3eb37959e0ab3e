// Live events as Server-Sent Events: one `data:` line of JSON per event, `id:` = seq so a reconnecting
// browser (EventSource sends Last-Event-ID) gets what it missed from the ring. Comments keep proxies awake.
//
// A stream outlives the request that opened it, so the session check of that request is not enough: a
// stream ends with its session (logout, user deleted, password reset, expiry) and re-checks the session
// before every event and heartbeat, so nothing reaches a caller who is no longer logged in.
import type { FastifyRequest } from 'fastify';
import type { Api, ApiDeps } from '../types.js';
import { allows } from '../types.js';
import { ErrorSchema, type ApiEvent } from '../schemas.js';
import { HttpError } from '../plugins/errors.js';

// What a stream may have waiting for a caller that does not read (stalled, or a viewer opening streams it
// never reads to fill this process's memory). Past it the stream ends: EventSource reconnects with
// Last-Event-ID and gets what it missed from the ring.
export const STREAM_BACKLOG_BYTES = 1024 * 1024;

/**
 * Streams open at once. Each holds a socket, a subscription and up to STREAM_BACKLOG_BYTES: a session opening
 * streams without end (a script, a panel reloaded in a loop) would otherwise hold them all. A panel is one
 * stream per tab; a reconnect may overlap the stream it replaces until the server sees that one close.
 */
export interface StreamLimits {
  perSession: number;
  total: number;
}
export const STREAM_LIMITS: StreamLimits = { perSession: 8, total: 256 };

export default function streamRoutes(app: Api, { events, sessions, store }: ApiDeps, opts: { heartbeatMs: number; limits: StreamLimits }): void {
  // Open streams never go idle: end them when the server closes, or close() would wait forever.
  const open = new Set<() => void>();
  // open streams by who opened them (a session id, or "local" for the local socket's admin)
  const bySession = new Map<string, number>();
  app.addHook('preClose', async () => {
    for (const end of open) end();
    await Promise.resolve();
  });

  /** Whether the caller who opened the stream may still read it. The local socket's admin always may. */
  const stillAllowed = (req: FastifyRequest): boolean => {
    const p = req.principal;
    if (p === null) return false;
    if (p.local) return true;
    const s = req.sessionId === null ? null : sessions.peek(req.sessionId);
    const user = s === null ? undefined : store.getUser(s.user);
    return user !== undefined && user.name === p.name && allows(user.role, 'viewer');
  };

  app.get('/api/v1/events/stream', {
    schema: { summary: 'Live events (text/event-stream); each data line is an event as in GET /api/v1/events. Ends with the session. 429 past 8 streams of one session, 503 past 256 in all.', tags: ['events'], response: { 401: ErrorSchema, 429: ErrorSchema, 503: ErrorSchema } },
    config: { access: 'viewer' },
  }, (req, reply) => {
    const who = req.sessionId ?? 'local';
    const mine = bySession.get(who) ?? 0;
    if (mine >= opts.limits.perSession) {
      throw new HttpError(429, `this session has ${mine} event streams open, the most one session may have; close one (a panel tab, a script) first`);
    }
    if (open.size >= opts.limits.total) {
      throw new HttpError(503, `lvsd serves ${open.size} event streams, the most it serves at once; try again later`);
    }
    bySession.set(who, mine + 1);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    let ended = false;
    const write = (text: string): void => {
      if (ended) return;
      if (!stillAllowed(req) || res.writableLength > STREAM_BACKLOG_BYTES) {
        end();
        return;
      }
      res.write(text);
    };
    const send = (e: ApiEvent): void => {
      write(`id: ${e.seq}\nevent: ${e.type === 'audit' ? 'audit' : 'director'}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    const unsubscribe = events.subscribe(send);
    const beat = setInterval(() => { write(': keep-alive\n\n'); }, opts.heartbeatMs);
    beat.unref();
    const unwatch = req.sessionId === null ? () => undefined : sessions.watch(req.sessionId, () => { end(); });
    function end(): void {
      if (ended) return;
      ended = true;
      clearInterval(beat);
      unsubscribe();
      unwatch();
      open.delete(end);
      const left = (bySession.get(who) ?? 1) - 1;
      if (left > 0) bySession.set(who, left);
      else bySession.delete(who);
      if (!res.writableEnded) res.end();
    }
    open.add(end);
    req.raw.on('close', end);
    res.on('close', end);
    write('retry: 2000\n: lvsd events\n\n');
    const last = Number(req.headers['last-event-id']);
    if (Number.isInteger(last) && last > 0) for (const e of events.recent({ after: last, limit: 1000 }).reverse()) send(e);
  });
}
