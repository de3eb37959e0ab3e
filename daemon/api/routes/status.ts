// Read routes: the whole snapshot (what `lvsd status` prints), one VRRP instance, one virtual server.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { ErrorSchema, SnapshotSchema, VirtualServiceSchema, VrrpInstanceSchema } from '../schemas.js';
import type { Api, ApiDeps } from '../types.js';

export default function statusRoutes(app: Api, { director }: ApiDeps): void {
  app.get('/api/v1/status', {
    schema: { summary: 'The director now: node, dataplane, VRRP instances, virtual and real servers, config', tags: ['status'], response: { 200: SnapshotSchema, 401: ErrorSchema } },
    config: { access: 'viewer' },
  }, () => director.snapshot());

  app.get('/api/v1/vrrp/:instance', {
    schema: { summary: 'One VRRP instance', tags: ['status'], params: Type.Object({ instance: Type.String() }), response: { 200: VrrpInstanceSchema, 401: ErrorSchema, 404: ErrorSchema } },
    config: { access: 'viewer' },
  }, (req) => {
    const i = director.snapshot().vrrp.find((x) => x.name === req.params.instance);
    if (i === undefined) throw new HttpError(404, `no VRRP instance "${req.params.instance}"`);
    return i;
  });

  app.get('/api/v1/services/:service', {
    schema: {
      summary: 'One virtual server with its real servers',
      tags: ['status'],
      params: Type.Object({ service: Type.String({ description: 'service id, e.g. tcp:192.168.77.100:80 (URL-encoded)' }) }),
      response: { 200: VirtualServiceSchema, 401: ErrorSchema, 404: ErrorSchema },
    },
    config: { access: 'viewer' },
  }, (req) => {
    const s = director.snapshot().virtualServices.find((x) => x.id === req.params.service || x.name === req.params.service);
    if (s === undefined) throw new HttpError(404, `no virtual server "${req.params.service}"`);
    return s;
  });
}
