// Security headers for every answer, and the built panel (webui/dist) as static files at /.
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Api } from '../types.js';

// The panel ships everything itself (no fonts, no CDNs): nothing but 'self' is needed.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export default fp(
  async (app: Api, opts: { webuiDir: string | null; hsts: boolean }) => {
    app.addHook('onSend', async (_req, reply) => {
      reply.header('content-security-policy', CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('x-frame-options', 'DENY');
      reply.header('referrer-policy', 'no-referrer');
      if (opts.hsts) reply.header('strict-transport-security', 'max-age=31536000');
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      await Promise.resolve();
    });
    const dir = opts.webuiDir;
    if (dir !== null && existsSync(join(dir, 'index.html'))) {
      await app.register(fastifyStatic, { root: dir, prefix: '/', index: ['index.html'], cacheControl: false });
    } else {
      app.get('/', { config: { access: 'public' } }, (_req, reply) =>
        reply.type('text/plain').send('lvsd API is running; the panel is not built (npm run build:webui). API: /api/v1/openapi.json\n'));
    }
  },
  { name: 'lvsd-web' },
);
