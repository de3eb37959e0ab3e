// An operator's withdraw of one announced prefix from this director (its BGP route goes; the other
// directors keep announcing it, so ECMP moves the flows to them), or its restore. Audited like a forced
// VRRP failover, and for operators and admins only.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { AuditEntrySchema, ErrorSchema } from '../schemas.js';
import type { Api, ApiDeps } from '../types.js';

export default function bgpRoutes(app: Api, { director, store, events }: ApiDeps): void {
  app.post('/api/v1/bgp/withdraw', {
    schema: {
      summary: 'Withdraw one bgp.announce prefix from this director, or restore it to follow quorum',
      tags: ['actions'],
      body: Type.Object({
        prefix: Type.String({ minLength: 1, description: 'As written in bgp.announce, e.g. 192.0.2.10/32.' }),
        how: Type.Union([Type.Literal('withdraw'), Type.Literal('restore')]),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({ prefix: Type.String(), announced: Type.Boolean(), withdrawnBy: Type.Union([Type.String(), Type.Null()]), audit: Type.Union([AuditEntrySchema, Type.Null()]) }),
        400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema,
      },
    },
    config: { access: 'operator' },
  }, async (req) => {
    const { prefix, how } = req.body;
    const find = (): { announced: boolean; withdrawnBy: string | null } | undefined => director.snapshot().bgp?.announcements.find((a) => a.prefix === prefix);
    const before = find();
    if (director.snapshot().bgp === undefined) throw new HttpError(409, 'BGP is not configured (no bgp section in the running config)');
    if (before === undefined) throw new HttpError(404, `prefix ${prefix} is not in bgp.announce`);
    const who = req.principal?.name ?? 'unknown';
    await director.forceBgp(prefix, how, who);
    const after = find();
    const entry = await store.audit(who, `bgp.${how}`, prefix,
      { announced: before.announced, withdrawnBy: before.withdrawnBy },
      { announced: after?.announced ?? null, withdrawnBy: after?.withdrawnBy ?? null });
    if (entry !== null) events.push({ ...entry, type: 'audit', action: entry.action });
    return { prefix, announced: after?.announced ?? false, withdrawnBy: after?.withdrawnBy ?? null, audit: entry };
  });
}
