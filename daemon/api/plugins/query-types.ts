// Ajv's type coercion is off for the whole API (a body's "5" is not 5, "true" is not true, null is not
// false, [1] is not 1: docs/api.md promises 400 naming the field). A query string, though, is text by
// nature: this hook turns a query field that its route declares as an integer or a number into one,
// when — and only when — the text is exactly a decimal number. Anything else stays a string, so the
// schema check refuses it with the field named. Repeated keys (?limit=1&limit=2) stay an array: refused.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../types.js';

const INTEGER = /^-?(0|[1-9][0-9]{0,15})$/;
const NUMBER = /^-?(0|[1-9][0-9]{0,15})(\.[0-9]{1,16})?$/;

type Props = Record<string, { type?: unknown } | undefined>;

function numericFields(req: FastifyRequest): Props | undefined {
  const qs = (req.routeOptions.schema as { querystring?: { properties?: Props } } | undefined)?.querystring;
  return qs?.properties;
}

/** The value a query field's text stands for under its declared type (unchanged when it is not exactly one). */
export function queryValue(declared: unknown, text: unknown): unknown {
  if (typeof text !== 'string') return text;
  if (declared === 'integer' && INTEGER.test(text)) return Number(text);
  if (declared === 'number' && NUMBER.test(text)) return Number(text);
  return text;
}

export default fp(
  (app: Api) => {
    app.addHook('preValidation', async (req) => {
      const props = numericFields(req);
      const q = req.query as Record<string, unknown> | null;
      if (props === undefined || q === null || typeof q !== 'object') return;
      for (const [name, value] of Object.entries(q)) {
        const declared = props[name]?.type;
        if (declared === 'integer' || declared === 'number') q[name] = queryValue(declared, value);
      }
      await Promise.resolve();
    });
  },
  { name: 'lvsd-query-types' },
);
