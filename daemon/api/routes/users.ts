// Users (admin only): list, add, change role or password, delete. Ending a user's sessions goes with
// deleting them or setting their password.
import { Type } from 'typebox';
import { ErrorSchema, RoleSchema, UserSchema } from '../schemas.js';
import { StoreError } from '../../state/store.js';
import type { Api, ApiDeps } from '../types.js';

const Errors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 507: ErrorSchema };
const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

export default function userRoutes(app: Api, { store, events, sessions }: ApiDeps): void {
  const view = (u: { name: string; role: 'viewer' | 'operator' | 'admin'; createdAt: string }) => ({ name: u.name, role: u.role, createdAt: u.createdAt });
  const audit = (): void => {
    const e = store.auditLog({ limit: 1 })[0];
    if (e !== undefined) events.push({ ...e, type: 'audit', action: e.action });
  };

  app.get('/api/v1/users', {
    schema: { summary: 'Users and their roles', tags: ['users'], response: { 200: Type.Array(UserSchema), ...Errors } },
    config: { access: 'admin' },
  }, () => store.users().map(view));

  app.post('/api/v1/users', {
    schema: {
      summary: 'Add a user',
      tags: ['users'],
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 8, maxLength: 1024 }), role: RoleSchema }, { additionalProperties: false }),
      response: { 201: UserSchema, ...Errors },
    },
    config: { access: 'admin' },
  }, async (req, reply) => {
    const u = await store.addUser(req.body.name, req.body.password, req.body.role, req.principal?.name ?? 'unknown');
    audit();
    return reply.code(201).send(view(u));
  });

  app.patch('/api/v1/users/:name', {
    schema: {
      summary: "Change a user's role and/or password",
      tags: ['users'],
      params: NameParams,
      body: Type.Object({ role: Type.Optional(RoleSchema), password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: UserSchema, ...Errors },
    },
    config: { access: 'admin' },
  }, async (req) => {
    const who = req.principal?.name ?? 'unknown';
    const { name } = req.params;
    // check both before changing either: nothing half-applied
    if (store.getUser(name) === undefined) throw new StoreError('not-found', `no user "${name}"`);
    if (req.body.role !== undefined) {
      await store.setRole(name, req.body.role, who);
      audit();
    }
    if (req.body.password !== undefined) {
      await store.setPassword(name, req.body.password, who);
      sessions.deleteUser(name);
      audit();
    }
    const u = store.getUser(name);
    if (u === undefined) throw new Error('user vanished');
    return view(u);
  });

  app.delete('/api/v1/users/:name', {
    schema: { summary: 'Delete a user (their sessions end)', tags: ['users'], params: NameParams, response: { 204: Type.Null(), ...Errors } },
    config: { access: 'admin' },
  }, async (req, reply) => {
    await store.deleteUser(req.params.name, req.principal?.name ?? 'unknown');
    sessions.deleteUser(req.params.name);
    audit();
    return reply.code(204).send(null);
  });
}
