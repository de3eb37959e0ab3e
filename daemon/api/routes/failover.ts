// Forced failover of a VRRP instance: lower our priority (the peer takes over if it can), go to
// maintenance (FAULT: give up mastership whatever the peer), or restore.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { AuditEntrySchema, ErrorSchema } from '../schemas.js';
import type { Api, ApiDeps } from '../types.js';

export default function failoverRoutes(app: Api, { director, store, events }: ApiDeps): void {
  app.post('/api/v1/vrrp/:instance/failover', {
    schema: {
      summary: 'Force a failover of a VRRP instance, or restore it',
      tags: ['actions'],
      params: Type.Object({ instance: Type.String({ minLength: 1 }) }),
      body: Type.Object({ how: Type.Union([Type.Literal('lower-priority'), Type.Literal('maintenance'), Type.Literal('restore')]) }, { additionalProperties: false }),
      response: { 200: Type.Object({ instance: Type.String(), audit: Type.Union([AuditEntrySchema, Type.Null()]) }), 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema },
    },
    config: { access: 'operator', peerAction: true },
  }, async (req) => {
    const name = req.params.instance;
    const before = director.snapshot().vrrp.find((i) => i.name === name);
    if (before === undefined) throw new HttpError(404, `no VRRP instance "${name}"`);
    const who = req.principal?.name ?? 'unknown';
    await director.forceFailover(name, req.body.how, who);
    const after = director.snapshot().vrrp.find((i) => i.name === name);
    const entry = await store.audit(who, `failover.${req.body.how}`, name,
      { state: before.state, priority: before.effectivePriority, forced: before.forced },
      { state: after?.state ?? null, priority: after?.effectivePriority ?? null, forced: after?.forced ?? null });
    if (entry !== null) events.push({ ...entry, type: 'audit', action: entry.action });
    return { instance: name, audit: entry };
  });
}
