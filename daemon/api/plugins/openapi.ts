// The OpenAPI 3.1 document, built from the same TypeBox schemas that validate and serialise each route
// (collected as routes register, so it cannot fall out of date). Served at /api/v1/openapi.json.
import fp from 'fastify-plugin';
import type { RouteOptions } from 'fastify';
import type { Api } from '../types.js';

interface Operation {
  summary?: string;
  tags?: string[];
  parameters: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: unknown[];
  'x-lvsd-role': string;
}

type Schemaish = Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] };

function params(where: 'path' | 'query', schema: unknown): unknown[] {
  const s = schema as Schemaish | undefined;
  if (s?.properties === undefined) return [];
  return Object.entries(s.properties).map(([name, sch]) => ({ name, in: where, required: where === 'path' || (s.required ?? []).includes(name), schema: sch }));
}

export function buildOperation(route: RouteOptions): Operation {
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const config = (route.config ?? {}) as { access?: string };
  const op: Operation = {
    parameters: [...params('path', schema.params), ...params('query', schema.querystring)],
    responses: {},
    'x-lvsd-role': config.access ?? 'admin',
  };
  if (typeof schema.summary === 'string') op.summary = schema.summary;
  if (Array.isArray(schema.tags)) op.tags = schema.tags as string[];
  if (schema.body !== undefined) op.requestBody = { required: true, content: { 'application/json': { schema: schema.body } } };
  const responses = (schema.response ?? {}) as Record<string, unknown>;
  for (const [code, sch] of Object.entries(responses)) {
    const isNull = (sch as Schemaish).type === 'null';
    op.responses[code] = isNull ? { description: 'no content' } : { description: code.startsWith('2') ? 'OK' : 'error', content: { 'application/json': { schema: sch } } };
  }
  if (Object.keys(op.responses).length === 0) op.responses['200'] = { description: 'OK' };
  if (config.access !== 'public') op.security = [{ session: [] }];
  return op;
}

export default fp(
  (app: Api, opts: { title: string; version: string }) => {
    const paths: Record<string, Record<string, Operation>> = {};
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/api/') || route.method === 'HEAD') return;
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) {
        if (m === 'HEAD') continue;
        (paths[path] ??= {})[m.toLowerCase()] = buildOperation(route);
      }
    });
    app.get('/api/v1/openapi.json', { config: { access: 'public' } }, () => ({
      openapi: '3.1.0',
      info: { title: opts.title, version: opts.version, description: 'lvsd director API. Roles: viewer < operator < admin (x-lvsd-role per operation). State-changing calls need the x-csrf-token header from GET /api/v1/session.' },
      components: { securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'lvsd_session' } } },
      paths,
    }));
  },
  { name: 'lvsd-openapi' },
);
