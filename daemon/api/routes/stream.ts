// Live events as Server-Sent Events: one `data:` line of JSON per event, `id:` = seq so a reconnecting
// browser (EventSource sends Last-Event-ID) gets what it missed from the ring. Comments keep proxies awake.
import type { Api, ApiDeps } from '../types.js';
import { ErrorSchema, type ApiEvent } from '../schemas.js';

export default function streamRoutes(app: Api, { events }: ApiDeps, opts: { heartbeatMs: number }): void {
  // Open streams never go idle: end them when the server closes, or close() would wait forever.
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of open) end();
    await Promise.resolve();
  });
  app.get('/api/v1/events/stream', {
    schema: { summary: 'Live events (text/event-stream); each data line is an event as in GET /api/v1/events', tags: ['events'], response: { 401: ErrorSchema } },
    config: { access: 'viewer' },
  }, (req, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const send = (e: ApiEvent): void => {
      res.write(`id: ${e.seq}\nevent: ${e.type === 'audit' ? 'audit' : 'director'}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    res.write('retry: 2000\n: lvsd events\n\n');
    const last = Number(req.headers['last-event-id']);
    if (Number.isInteger(last) && last > 0) for (const e of events.recent({ after: last, limit: 1000 }).reverse()) send(e);
    const unsubscribe = events.subscribe(send);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), opts.heartbeatMs);
    beat.unref();
    const end = (): void => {
      clearInterval(beat);
      unsubscribe();
      open.delete(end);
      if (!res.writableEnded) res.end();
    };
    open.add(end);
    req.raw.on('close', end);
    res.on('close', end);
  });
}
