// Authentication and authorisation for every route: who is calling (session cookie, or the local admin
// socket), whether their role may call this route, and CSRF on state-changing requests. Also the
// session routes: log in (rate-limited), log out, who am I, change my password, and first-admin bootstrap.
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import { timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { ErrorSchema, SessionSchema } from '../schemas.js';
import type { Session } from '../sessions.js';
import { FailedAttempts } from '../attempts.js';
import { bearerToken, peerOfToken } from '../cluster/peer-token.js';
import type { RunningCluster } from '../cluster/running.js';
import type { ClusterPeer } from '../../config/types.js';
import { USER_NAME } from '../../state/store.js';
import { allows, type Api, type ApiDeps, type Principal } from '../types.js';

export const SESSION_COOKIE = 'lvsd_session';
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface AuthOptions extends ApiDeps {
  /** Every caller is the local admin (the unix socket server). */
  localAdmin: boolean;
  /** Cookies get the Secure flag (set when serving TLS). */
  secureCookies: boolean;
  loginRateLimit: { max: number; timeWindowMs: number };
  /** Where the accepted peer tokens are (the running config's cluster section). */
  cluster: RunningCluster;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const LoginBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const BootstrapBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), name: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const PasswordBody = Type.Object(
  { currentPassword: Type.String({ maxLength: 1024 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

/**
 * Who a request with a peer's token is: a viewer named peer:NAME for reads; for a route marked peerAction,
 * from a peer with acceptActions, the operator USER@PEER the peer forwards for (the peer checked that user's
 * role; this director's audit names both). Anything else a peer token asks is refused.
 */
function peerPrincipal(peer: ClusterPeer, req: FastifyRequest): Principal {
  if (req.method === 'GET' || req.method === 'HEAD') return { name: `peer:${peer.name}`, role: 'viewer', local: false, peer: true };
  if (req.routeOptions.config.peerAction !== true) throw new HttpError(403, 'a peer token may only read, and forward drain / enable / failover');
  if (!peer.acceptActions) throw new HttpError(403, `peer ${peer.name} may only read here (its cluster.peers entry has no acceptActions)`);
  // x-lvsd-user: the peer's user, a user name as the store allows them ("root" for the peer's local socket)
  const user = req.headers['x-lvsd-user'];
  if (typeof user !== 'string' || !USER_NAME.test(user)) throw new HttpError(403, 'a forwarded action must name its user (x-lvsd-user)');
  return { name: `${user}@${peer.name}`, role: 'operator', local: false, peer: true };
}

async function authPlugin(app: Api, opts: AuthOptions): Promise<void> {
  const { store, sessions } = opts;
  // per account, beside the per-address limit of the login route (rate-limit plugin below)
  const attempts = new FailedAttempts(opts.loginRateLimit.max, opts.loginRateLimit.timeWindowMs);
  /** Checks `password` of account `name` under the per-account limit: the user, null (wrong), or 429. */
  const checkPassword = async (name: string, password: string): Promise<Awaited<ReturnType<typeof store.authenticate>>> => {
    const wait = attempts.retryAfter(name);
    if (wait > 0) throw new HttpError(429, `too many failed password attempts for this account; try again in ${Math.ceil(wait / 1000)} s`);
    const user = await store.authenticate(name, password);
    if (user === null) attempts.fail(name, store.getUser(name) !== undefined);
    else attempts.succeed(name);
    return user;
  };
  await app.register(cookie, { secret: store.cookieSecret });
  await app.register(rateLimit, { global: false });

  app.decorateRequest('principal', null);
  app.decorateRequest('csrfToken', null);
  app.decorateRequest('sessionId', null);

  const sessionOf = (req: FastifyRequest): Session | null => {
    const raw = req.cookies[SESSION_COOKIE];
    if (raw === undefined) return null;
    const un = req.unsignCookie(raw);
    if (!un.valid) return null;
    return sessions.get(un.value);
  };

  app.addHook('onRequest', async (req) => {
    const access = req.routeOptions.config.access;
    if (opts.localAdmin) {
      req.principal = { name: 'local', role: 'admin', local: true };
    } else {
      const s = sessionOf(req);
      const user = s === null ? undefined : store.getUser(s.user);
      if (s !== null && user !== undefined) {
        req.principal = { name: user.name, role: user.role, local: false };
        req.csrfToken = s.csrfToken;
        req.sessionId = s.id;
      }
    }
    const token = req.principal === null && !opts.localAdmin ? bearerToken(req.headers.authorization) : null;
    if (token !== null) {
      const peer = peerOfToken((await opts.cluster.current()).cluster, token);
      if (peer === null) {
        req.log.warn({ ip: req.ip }, 'unknown peer token');
        throw new HttpError(401, 'unknown peer token');
      }
      req.principal = peerPrincipal(peer, req);
    }
    // Every /api route must declare its access; a forgotten one is closed, not open. Unknown paths
    // (no route) fall through to the 404 handler.
    const known = req.routeOptions.url !== undefined;
    const need = access ?? (known && req.url.startsWith('/api/') ? 'admin' : 'public');
    if (need === 'public') return;
    const p = req.principal;
    if (p === null) throw new HttpError(401, 'log in first');
    if (!allows(p.role, need)) throw new HttpError(403, `${p.name} is ${p.role}; this needs ${need}`);
    // a bearer token is no ambient credential a foreign page could ride on: CSRF does not apply to it
    if (UNSAFE.has(req.method) && !p.local && p.peer !== true && req.routeOptions.config.csrfExempt !== true) {
      const sent = req.headers['x-csrf-token'];
      if (typeof sent !== 'string' || req.csrfToken === null || !sameToken(sent, req.csrfToken)) {
        throw new HttpError(403, 'missing or wrong x-csrf-token header (reload the page)');
      }
    }
  });

  // Login and bootstrap cannot carry a CSRF token; a form on another site still cannot post JSON to them
  // without a CORS preflight we never answer, and an Origin that is not ours is refused outright.
  const checkOrigin = (req: FastifyRequest): void => {
    const origin = req.headers.origin;
    if (origin === undefined) return;
    const host = req.headers.host;
    let ok = false;
    try {
      ok = host !== undefined && new URL(origin).host === host;
    } catch {
      ok = false;
    }
    if (!ok) throw new HttpError(403, `cross-origin request from ${origin} refused`);
  };

  const startSession = (reply: FastifyReply, p: Principal): { user: string; role: Principal['role']; csrfToken: string; local: boolean } => {
    const s = sessions.create(p.name);
    reply.setCookie(SESSION_COOKIE, s.id, { signed: true, httpOnly: true, sameSite: 'strict', secure: opts.secureCookies, path: '/' });
    return { user: p.name, role: p.role, csrfToken: s.csrfToken, local: false };
  };

  app.post('/api/v1/session', {
    schema: {
      summary: 'Log in',
      tags: ['session'],
      body: LoginBody,
      response: { 200: SessionSchema, 400: ErrorSchema, 401: ErrorSchema, 429: ErrorSchema },
    },
    config: {
      access: 'public',
      csrfExempt: true,
      rateLimit: {
        max: opts.loginRateLimit.max,
        timeWindow: opts.loginRateLimit.timeWindowMs,
        errorResponseBuilder: (_req, ctx) => new HttpError(429, `too many login attempts; try again in ${Math.ceil(ctx.ttl / 1000)} s`),
      },
    },
  }, async (req, reply) => {
    checkOrigin(req);
    const user = await checkPassword(req.body.name, req.body.password);
    if (user === null) {
      req.log.warn({ user: req.body.name, ip: req.ip }, 'login failed');
      throw new HttpError(401, 'wrong user name or password');
    }
    req.log.info({ user: user.name }, 'logged in');
    return startSession(reply, { name: user.name, role: user.role, local: false });
  });

  app.get('/api/v1/session', {
    schema: { summary: 'Who am I (and the CSRF token to send back)', tags: ['session'], response: { 200: SessionSchema, 401: ErrorSchema } },
    config: { access: 'viewer' },
  }, (req) => {
    const p = req.principal;
    if (p === null) throw new HttpError(401, 'log in first');
    return { user: p.name, role: p.role, csrfToken: req.csrfToken ?? '', local: p.local };
  });

  app.delete('/api/v1/session', {
    schema: { summary: 'Log out', tags: ['session'], response: { 204: Type.Null(), 401: ErrorSchema, 403: ErrorSchema } },
    config: { access: 'viewer' },
  }, async (req, reply) => {
    const s = sessionOf(req);
    if (s !== null) sessions.delete(s.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send(null);
  });

  app.put('/api/v1/session/password', {
    schema: { summary: 'Change my own password', tags: ['session'], body: PasswordBody, response: { 204: Type.Null(), 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 429: ErrorSchema } },
    config: { access: 'viewer' },
  }, async (req, reply) => {
    const p = req.principal;
    if (p === null || p.local) throw new HttpError(400, 'the local socket has no password');
    if ((await checkPassword(p.name, req.body.currentPassword)) === null) throw new HttpError(403, 'current password is wrong');
    await store.setPassword(p.name, req.body.password, p.name);
    const s = sessionOf(req);
    sessions.deleteUser(p.name, s?.id);
    return reply.code(204).send(null);
  });

  app.get('/api/v1/bootstrap', {
    schema: {
      summary: 'Whether the first admin still has to be created with the bootstrap token',
      tags: ['session'],
      response: { 200: Type.Object({ needed: Type.Boolean() }) },
    },
    config: { access: 'public' },
  }, () => ({ needed: !store.hasAdmin() }));

  app.post('/api/v1/bootstrap', {
    schema: {
      summary: 'Create the first admin with the one-time token lvsd printed at its first start',
      tags: ['session'],
      body: BootstrapBody,
      response: { 200: SessionSchema, 400: ErrorSchema, 403: ErrorSchema, 429: ErrorSchema },
    },
    config: {
      access: 'public',
      csrfExempt: true,
      rateLimit: { max: opts.loginRateLimit.max, timeWindow: opts.loginRateLimit.timeWindowMs, errorResponseBuilder: () => new HttpError(429, 'too many attempts') },
    },
  }, async (req, reply) => {
    checkOrigin(req);
    const user = await store.redeemBootstrapToken(req.body.token, req.body.name, req.body.password);
    opts.events.push({ type: 'audit', at: new Date().toISOString(), who: user.name, action: 'user.add', target: user.name });
    return startSession(reply, { name: user.name, role: user.role, local: false });
  });
}

export default fp(authPlugin, { name: 'lvsd-auth', dependencies: ['lvsd-errors'] });
