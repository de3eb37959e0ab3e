// Operator overrides: drain / enable / weight / maintenance of a real server or a whole virtual server.
// Order matters for "nothing half-applied": check the target, apply in the director, persist with its
// audit entry; if persisting fails, put the director back as it was.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { AuditEntrySchema, ErrorSchema, OverrideSchema } from '../schemas.js';
import type { Override } from '../../state/schema.js';
import { targetKey, type OverrideTarget } from '../../state/target-key.js';
import type { AuditEntry } from '../../state/store.js';
import type { Api, ApiDeps } from '../types.js';

const Result = Type.Object({ target: Type.String(), override: Type.Union([OverrideSchema, Type.Null()]), audit: Type.Union([AuditEntrySchema, Type.Null()]) });
const Errors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 507: ErrorSchema };

function isEmpty(o: Override): boolean {
  return o.drain !== true && o.maintenance !== true && o.weight === undefined;
}

export default function overrideRoutes(app: Api, deps: ApiDeps): void {
  const { director, store, events } = deps;

  const checkTarget = (t: OverrideTarget): void => {
    const s = director.snapshot().virtualServices.find((x) => x.id === t.service);
    if (s === undefined) throw new HttpError(404, `no virtual server "${t.service}"`);
    if (t.realServer !== undefined && !s.realServers.some((r) => r.id === t.realServer)) {
      throw new HttpError(404, `virtual server "${t.service}" has no real server "${t.realServer}"`);
    }
  };

  // One change of a target at a time, from its "before" to its store write or undo. Two concurrent PUTs used
  // to interleave: both read the same "before", and the one whose write failed put that stale "before" back in
  // the director over the other's change, which the store kept — the running state and the store disagreed.
  const busy = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(t: OverrideTarget, run: () => Promise<T>): Promise<T> => {
    const key = targetKey(t);
    const next = (busy.get(key) ?? Promise.resolve()).then(run, run);
    const tail = next.catch(() => undefined);
    busy.set(key, tail);
    void tail.then(() => { if (busy.get(key) === tail) busy.delete(key); });
    return next;
  };

  const change = (t: OverrideTarget, wanted: Override | null, who: string): Promise<{ target: string; override: Override | null; audit: AuditEntry | null }> => oneAtATime(t, async () => {
    checkTarget(t);
    const before = store.getOverride(t);
    const next = wanted === null || isEmpty(wanted) ? null : wanted;
    if (next === null) await director.clearOverride(t, who);
    else await director.setOverride(t, next, who);
    let entry: AuditEntry | null;
    try {
      entry = await store.setOverride(t, next, who, next === null ? 'override.clear' : 'override.set');
    } catch (e) {
      // the director changed but the store did not: undo, so a restart cannot disagree with now. An undo the
      // director refuses is logged beside the store's error, and the caller gets the store's error, the cause:
      // the undo's own message used to replace it.
      try {
        if (before === null) await director.clearOverride(t, who);
        else await director.setOverride(t, before, who);
      } catch (undoError) {
        app.log.error({ target: targetKey(t), err: e, undoError: undoError instanceof Error ? undoError.message : String(undoError) }, 'override: the state file write failed and undoing the change in the director failed too; the director runs the new override, the state file holds the old one');
      }
      throw e;
    }
    if (entry !== null) events.push({ ...entry, type: 'audit', action: entry.action });
    return { target: targetKey(t), override: next, audit: entry };
  });

  const SvcParams = Type.Object({ service: Type.String({ minLength: 1 }) });
  const RsParams = Type.Object({ service: Type.String({ minLength: 1 }), realServer: Type.String({ minLength: 1 }) });
  const who = (p: { name: string } | null): string => p?.name ?? 'unknown';

  app.put('/api/v1/services/:service/override', {
    schema: { summary: 'Drain / weight / maintenance for a whole virtual server (replaces its override; {} clears)', tags: ['actions'], params: SvcParams, body: OverrideSchema, response: { 200: Result, ...Errors } },
    config: { access: 'operator' },
  }, (req) => change({ service: req.params.service }, req.body, who(req.principal)));

  app.delete('/api/v1/services/:service/override', {
    schema: { summary: 'Enable: clear the override of a virtual server', tags: ['actions'], params: SvcParams, response: { 200: Result, ...Errors } },
    config: { access: 'operator' },
  }, (req) => change({ service: req.params.service }, null, who(req.principal)));

  app.put('/api/v1/services/:service/real-servers/:realServer/override', {
    schema: { summary: 'Drain / weight / maintenance for one real server (replaces its override; {} clears)', tags: ['actions'], params: RsParams, body: OverrideSchema, response: { 200: Result, ...Errors } },
    config: { access: 'operator', peerAction: true },
  }, (req) => change({ service: req.params.service, realServer: req.params.realServer }, req.body, who(req.principal)));

  app.delete('/api/v1/services/:service/real-servers/:realServer/override', {
    schema: { summary: 'Enable: clear the override of one real server', tags: ['actions'], params: RsParams, response: { 200: Result, ...Errors } },
    config: { access: 'operator', peerAction: true },
  }, (req) => change({ service: req.params.service, realServer: req.params.realServer }, null, who(req.principal)));

  app.get('/api/v1/overrides', {
    schema: {
      summary: 'Every override in the state store',
      tags: ['status'],
      response: { 200: Type.Array(Type.Object({ service: Type.String(), realServer: Type.Optional(Type.String()), override: OverrideSchema, by: Type.String(), at: Type.String() })), 401: ErrorSchema },
    },
    config: { access: 'viewer' },
  }, () => [...store.overrides()]);
}
