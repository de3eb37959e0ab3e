// Builds the API server: one fastify plugin per concern (errors, auth, OpenAPI, web) and one route file
// per area. Used twice by startApi: on TCP (browser sessions) and on the local unix socket (trusted admin).
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import errorsPlugin from './plugins/errors.js';
import authPlugin from './plugins/auth.js';
import openapiPlugin from './plugins/openapi.js';
import queryTypesPlugin from './plugins/query-types.js';
import hostCheckPlugin from './plugins/host-check.js';
import webPlugin from './plugins/web.js';
import statusRoutes from './routes/status.js';
import overrideRoutes from './routes/overrides.js';
import failoverRoutes from './routes/failover.js';
import bgpRoutes from './routes/bgp.js';
import configRoutes from './routes/config.js';
import userRoutes from './routes/users.js';
import auditRoutes from './routes/audit.js';
import streamRoutes, { STREAM_LIMITS, type StreamLimits } from './routes/stream.js';
import metricsRoutes from './routes/metrics.js';
import historyRoutes from './routes/history.js';
import clusterRoutes from './routes/cluster.js';
import clusterForwardRoutes from './routes/cluster-forward.js';
import { RunningCluster } from './cluster/running.js';
import { History } from './history.js';
import { EventLog } from './event-log.js';
import { SessionTable } from './sessions.js';
import { createMetrics } from './metrics.js';
import { lazyCompilersFactory } from './lazy-compilers.js';
import type { DirectorPort } from '../director/port.js';
import type { StateStore } from '../state/store.js';
import type { Api } from './types.js';

export const API_VERSION = '0.1.0';
/**
 * The built panel: dist/webui (a package built with `vite build webui --outDir ../dist/webui`) if it is
 * there, else webui/dist of the source tree (`vite build webui`).
 */
export const DEFAULT_WEBUI_DIR = ((): string => {
  const packaged = fileURLToPath(new URL('../../webui', import.meta.url));
  return existsSync(join(packaged, 'index.html')) ? packaged : fileURLToPath(new URL('../../../webui/dist', import.meta.url));
})();

export interface ApiOptions {
  director: DirectorPort;
  store: StateStore;
  /** A pino logger (lvsd's), or false for none. */
  logger?: FastifyBaseLogger | false;
  /** Every caller is admin "local" (only for the unix socket). */
  localAdmin?: boolean;
  /** TLS key and certificate: serve HTTPS, cookies get Secure, HSTS on. */
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  /** The built panel; null = none. Default: webui/dist of this install. */
  webuiDir?: string | null;
  loginRateLimit?: { max: number; timeWindowMs: number };
  /** Shared by the TCP and socket servers so both see one event history and one session table. */
  events?: EventLog;
  sessions?: SessionTable;
  /** The graphs' history, shared like events; without one the server keeps its own (`historyPeriodMs`). */
  history?: History;
  historyPeriodMs?: number;
  heartbeatMs?: number;
  /** Event streams open at once, per session and in all (routes/stream.ts: STREAM_LIMITS); tests lower them. */
  streamLimits?: StreamLimits;
  processMetrics?: boolean;
  /**
   * Names the TCP panel answers to besides localhost, 127.0.0.1, [::1] and the address a request came in
   * on (plugins/host-check.ts). A loopback panel refuses any other Host; beyond loopback the list applies
   * only when given.
   */
  allowedHosts?: readonly string[];
}

/**
 * Feeds the director's events into an EventLog; returns the unsubscribe function. Every single health
 * check result is left out (thousands a second on a big pool): /metrics counts them, and the panel and
 * the event history see health.change, which is what operators act on.
 */
export function connectEvents(director: DirectorPort, events: EventLog): () => void {
  return director.subscribe((e) => {
    if (e.type !== 'health.result') events.push(e);
  });
}

export async function buildApi(opts: ApiOptions): Promise<Api> {
  const https = opts.https ?? null;
  const base = {
    trustProxy: false,
    bodyLimit: 5 * 1024 * 1024,
    // every error at once, unknown fields refused rather than silently dropped, and no type coercion:
    // {"weight":"5"}, {"drain":"true"}, {"drain":null} and [5] for 5 are 400 naming the field (fastify's
    // default coerceTypes: 'array' would accept them all; query strings are typed by plugins/query-types)
    ajv: { customOptions: { allErrors: true, removeAdditional: false as const, coerceTypes: false as const } },
    // each route's validators and serializers are compiled on first use, not at ready (lazy-compilers.ts)
    schemaController: { compilersFactory: lazyCompilersFactory },
    // A URL the router cannot take (bad percent-encoding, a path parameter over 100 characters) gets lvsd's
    // error shape too; fastify's own answer quotes the whole path back.
    frameworkErrors: (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
      const long = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const status = long ? 414 : 400;
      const message = long ? 'a path parameter is longer than 100 characters' : 'the URL is not valid (bad percent-encoding or a malformed path)';
      void reply.code(status).type('application/json').send({ statusCode: status, error: long ? 'URI Too Long' : 'Bad Request', message });
    },
  };
  const common = https !== null ? { ...base, https: { key: https.key, cert: https.cert } } : base;
  const logged = opts.logger === undefined || opts.logger === false ? { logger: false } : { loggerInstance: opts.logger };
  const app = Fastify({ ...common, ...logged }).withTypeProvider<TypeBoxTypeProvider>();

  let events = opts.events;
  if (events === undefined) {
    const own = new EventLog();
    events = own;
    const off = connectEvents(opts.director, own);
    app.addHook('onClose', async () => {
      off();
      await Promise.resolve();
    });
  }
  const sessions = opts.sessions ?? new SessionTable();
  const deps = { director: opts.director, store: opts.store, events, sessions };
  const cluster = new RunningCluster(opts.director);

  await app.register(errorsPlugin);
  // the local socket has no Host to check: only root can open it
  if (opts.localAdmin !== true) await app.register(hostCheckPlugin, { allowedHosts: opts.allowedHosts ?? [] });
  await app.register(openapiPlugin, { title: 'lvsd', version: API_VERSION });
  await app.register(queryTypesPlugin);
  await app.register(authPlugin, {
    ...deps,
    localAdmin: opts.localAdmin === true,
    secureCookies: https !== null,
    loginRateLimit: opts.loginRateLimit ?? { max: 10, timeWindowMs: 60_000 },
    sessions,
    cluster,
  });
  await app.register(webPlugin, { webuiDir: opts.webuiDir === undefined ? DEFAULT_WEBUI_DIR : opts.webuiDir, hsts: https !== null });

  const metrics = createMetrics(opts.director, { processMetrics: opts.processMetrics ?? false });
  app.addHook('onClose', async () => {
    metrics.close();
    await Promise.resolve();
  });

  let history = opts.history;
  if (history === undefined) {
    const own = new History(opts.director, opts.historyPeriodMs === undefined ? {} : { periodMs: opts.historyPeriodMs }).start();
    history = own;
    app.addHook('onClose', async () => {
      own.stop();
      await Promise.resolve();
    });
  }
  const graphs = history;

  await app.register((scope: Api) => {
    statusRoutes(scope, deps);
    historyRoutes(scope, graphs);
    overrideRoutes(scope, deps);
    failoverRoutes(scope, deps);
    bgpRoutes(scope, deps);
    configRoutes(scope, deps);
    userRoutes(scope, deps);
    auditRoutes(scope, deps);
    clusterRoutes(scope, deps, cluster);
    clusterForwardRoutes(scope, deps, cluster);
    streamRoutes(scope, deps, { heartbeatMs: opts.heartbeatMs ?? 15_000, limits: opts.streamLimits ?? STREAM_LIMITS });
    metricsRoutes(scope, metrics.registry);
    return Promise.resolve();
  });
  return app;
}
