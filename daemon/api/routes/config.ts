// The config page: the running config, validate / diff a candidate, apply it (reload), roll back.
import { Type } from 'typebox';
import { HttpError } from '../plugins/errors.js';
import { lineDiff } from '../line-diff.js';
import { MAX_CONFIG_BYTES } from '../../config/errors.js';
import { ApplyResultSchema, ConfigCheckSchema, ConfigDiffSchema, ConfigTextSchema, ErrorSchema, RunningConfigSchema } from '../schemas.js';
import type { ApplyResult } from '../../director/port.js';
import type { Api, ApiDeps } from '../types.js';

const Errors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 507: ErrorSchema };

/** Why a config was not applied: its errors, or the part whose reload failed and was rolled back. */
const notApplied = (r: ApplyResult): string =>
  r.failure === undefined ? `${r.errors.length} error(s)` : (r.errors[0]?.message ?? `reload failed at ${r.failure.part}: ${r.failure.error}`);

export default function configRoutes(app: Api, { director, store, events }: ApiDeps): void {
  // The config can hold VRRP passwords: operators and admins only.
  app.get('/api/v1/config', {
    schema: { summary: 'The running config file', tags: ['config'], response: { 200: RunningConfigSchema, ...Errors } },
    config: { access: 'operator' },
  }, () => director.runningConfig());

  app.post('/api/v1/config/validate', {
    schema: { summary: 'Validate a candidate config (nothing changes)', tags: ['config'], body: ConfigTextSchema, response: { 200: ConfigCheckSchema, ...Errors } },
    config: { access: 'operator' },
  }, (req) => director.validateConfig(req.body.text));

  app.post('/api/v1/config/diff', {
    schema: { summary: 'What applying a candidate config would change (nothing changes)', tags: ['config'], body: ConfigTextSchema, response: { 200: ConfigDiffSchema, ...Errors } },
    config: { access: 'operator' },
  }, async (req) => {
    const [d, running] = await Promise.all([director.diffConfig(req.body.text), director.runningConfig()]);
    // A text lvsd will not parse gets no line diff: 4 MB of short lines was an 800,000-line answer of 90 MB
    // that held the event loop for 20 s. Its errors say why it is refused.
    const lines = Buffer.byteLength(req.body.text) > MAX_CONFIG_BYTES ? [] : lineDiff(running.text, req.body.text);
    return { ...d, lines };
  });

  const record = async (who: string, action: string, beforeHash: string, r: ApplyResult): Promise<void> => {
    const entry = await store.audit(who, action, director.snapshot().config.path, { hash: beforeHash }, { hash: r.hash, changes: r.changes.map((c) => `${c.change} ${c.kind} ${c.name}${c.detail === undefined ? '' : ` (${c.detail})`}`) });
    if (entry !== null) events.push({ ...entry, type: 'audit', action: entry.action });
  };

  app.post('/api/v1/config/apply', {
    schema: {
      summary: 'Validate, write and reload a new config; on any error nothing changes (422 with every error)',
      tags: ['config'],
      body: Type.Object({
        text: ConfigTextSchema.properties.text,
        expectedHash: Type.Optional(Type.String({ description: 'refuse (409) unless the running config still has this hash' })),
        allowEmpty: Type.Optional(Type.Boolean({ description: 'apply a config with no VRRP instance and no virtual server over one that has some (refused by default: a truncated file?)' })),
      }, { additionalProperties: false }),
      response: { 200: ApplyResultSchema, ...Errors, 409: ErrorSchema, 422: ErrorSchema },
    },
    config: { access: 'admin' },
  }, async (req) => {
    const who = req.principal?.name ?? 'unknown';
    const before = await director.runningConfig();
    // The hash is checked again inside the director's reload queue: an apply that waited behind another sees its result.
    const r = await director.applyConfig(req.body.text, who, { expectedHash: req.body.expectedHash, allowEmpty: req.body.allowEmpty });
    if (!r.ok) throw new HttpError(422, `config not applied: ${notApplied(r)}`, r.errors.map((e) => e.message));
    await record(who, 'config.apply', before.hash, r);
    return r;
  });

  app.post('/api/v1/config/reload', {
    schema: {
      summary: 'Re-read the config file on disk and apply the difference, as SIGHUP does (422 when invalid or rolled back)',
      tags: ['config'],
      body: Type.Object({ allowEmpty: Type.Optional(Type.Boolean({ description: 'as for apply' })) }, { additionalProperties: false, description: '{} to reload as SIGHUP does' }),
      response: { 200: ApplyResultSchema, ...Errors, 409: ErrorSchema, 422: ErrorSchema },
    },
    config: { access: 'admin' },
  }, async (req) => {
    const who = req.principal?.name ?? 'unknown';
    const before = await director.runningConfig();
    const r = await director.reloadFile(who, { allowEmpty: req.body.allowEmpty === true });
    if (!r.ok) throw new HttpError(422, `config not reloaded: ${notApplied(r)}`, r.errors.map((e) => e.message));
    await record(who, 'config.reload', before.hash, r);
    return r;
  });

  app.post('/api/v1/config/rollback', {
    schema: { summary: 'Go back to the last config that applied cleanly before this one', tags: ['config'], response: { 200: ApplyResultSchema, ...Errors, 409: ErrorSchema, 422: ErrorSchema } },
    config: { access: 'admin' },
  }, async (req) => {
    const who = req.principal?.name ?? 'unknown';
    const before = await director.runningConfig();
    if (!before.canRollback) throw new HttpError(409, 'no previous good config to roll back to');
    const r = await director.rollbackConfig(who);
    if (!r.ok) throw new HttpError(422, `rollback failed: ${notApplied(r)}`, r.errors.map((e) => e.message));
    await record(who, 'config.rollback', before.hash, r);
    return r;
  });
}
