// An API server on a temp state file and a FakeDirector, with one user per role, for fastify.inject tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { buildApi, type ApiOptions } from '../../daemon/api/server.js';
import { openStore, type StateStore } from '../../daemon/state/store.js';
import type { Api } from '../../daemon/api/types.js';
import { FakeDirector } from './fake-director.js';

export const PASSWORDS = { admin: 'admin password', operator: 'operator password', viewer: 'viewer password' } as const;
export type RoleName = keyof typeof PASSWORDS;

export interface Client {
  cookie: string;
  csrf: string;
}

export interface Harness {
  app: Api;
  store: StateStore;
  director: FakeDirector;
  dir: string;
  stateFile: string;
  login(name: string, password?: string): Promise<Client>;
  as(role: RoleName): Promise<Client>;
  /** inject with a session (or none), adding the CSRF header on unsafe methods. */
  call(client: Client | null, method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export function cookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const first = Array.isArray(set) ? set[0] : set;
  if (first === undefined) throw new Error(`no set-cookie in ${res.statusCode} ${res.body}`);
  return first.split(';')[0] ?? '';
}

export async function harness(opts: Partial<ApiOptions> & { users?: boolean } = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-api-'));
  const stateFile = join(dir, 'state.json');
  const { store } = await openStore(stateFile, { passwordCost: 1024 });
  if (opts.users !== false) {
    for (const role of ['admin', 'operator', 'viewer'] as const) await store.addUser(role, PASSWORDS[role], role, 'test');
  }
  const director = opts.director instanceof FakeDirector ? opts.director : new FakeDirector();
  const app = await buildApi({ webuiDir: null, ...opts, director, store });
  await app.ready();
  const clients = new Map<string, Client>();
  const h: Harness = {
    app,
    store,
    director,
    dir,
    stateFile,
    async login(name, password) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { name, password: password ?? PASSWORDS[name as RoleName] } });
      if (res.statusCode !== 200) throw new Error(`login ${name}: ${res.statusCode} ${res.body}`);
      return { cookie: cookieOf(res), csrf: (res.json<{ csrfToken: string }>()).csrfToken };
    },
    async as(role) {
      let c = clients.get(role);
      if (c === undefined) {
        c = await h.login(role);
        clients.set(role, c);
      }
      return c;
    },
    call(client, method, url, body, headers = {}) {
      const hs: Record<string, string> = { ...headers };
      if (client !== null) {
        hs.cookie = client.cookie;
        if (!['GET', 'HEAD'].includes(method) && hs['x-csrf-token'] === undefined) hs['x-csrf-token'] = client.csrf;
      }
      return app.inject({ method: method as 'GET', url, headers: hs, ...(body === undefined ? {} : { payload: body as object }) });
    },
    async close() {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return h;
}

export const WEB = 'tcp:192.168.77.100:80';
export const WEB_ENC = encodeURIComponent(WEB);
export const RS1 = '10.0.1.11:80';
export const RS1_ENC = encodeURIComponent(RS1);
