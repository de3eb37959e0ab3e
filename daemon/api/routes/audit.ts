// The audit log (who changed what, when, before → after) and the recent events, both with filters.
import { Type } from 'typebox';
import { AuditEntrySchema, ErrorSchema, EventSchema } from '../schemas.js';
import type { Api, ApiDeps } from '../types.js';

export default function auditRoutes(app: Api, { store, events }: ApiDeps): void {
  app.get('/api/v1/audit', {
    schema: {
      summary: 'Audit log, newest first',
      tags: ['audit'],
      querystring: Type.Object({
        who: Type.Optional(Type.String({ maxLength: 64 })),
        action: Type.Optional(Type.String({ maxLength: 64, description: 'exact or dotted prefix: "override", "config.apply"' })),
        since: Type.Optional(Type.String({ format: 'date-time' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
      }, { additionalProperties: false }),
      response: { 200: Type.Array(AuditEntrySchema), 400: ErrorSchema, 401: ErrorSchema },
    },
    config: { access: 'viewer' },
  }, (req) => store.auditLog(req.query));

  app.get('/api/v1/events', {
    schema: {
      summary: 'Recent events (VRRP transitions, health, overrides, reloads, audit), newest first',
      tags: ['events'],
      querystring: Type.Object({
        type: Type.Optional(Type.String({ maxLength: 64, description: 'exact or dotted prefix: "vrrp", "health.change"' })),
        after: Type.Optional(Type.Integer({ minimum: 0, description: 'only events with a larger seq' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
      }, { additionalProperties: false }),
      response: { 200: Type.Array(EventSchema), 400: ErrorSchema, 401: ErrorSchema },
    },
    config: { access: 'viewer' },
  }, (req) => events.recent(req.query));
}
