// Prometheus /metrics. Public like most exporters (the API listens on 127.0.0.1 by default); put it
// behind the firewall or a proxy when the API listens wider.
import type { Registry } from 'prom-client';
import type { Api } from '../types.js';

export default function metricsRoutes(app: Api, registry: Registry): void {
  app.get('/metrics', { config: { access: 'public' } }, async (_req, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}
