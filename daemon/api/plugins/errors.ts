// One error shape for every failure: { statusCode, error, message, details? }. The message names what was
// wrong (the field, the object); internal errors are logged and answered without their details.
import { echo } from '../../config/errors.js';
import fp from 'fastify-plugin';
import type { FastifyError } from 'fastify';
import { StoreError } from '../../state/store.js';
import { DirectorRejection } from '../../director/port.js';
import type { Api } from '../types.js';
import { DiskFullError } from '../../state/disk-full.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict',
  413: 'Payload Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity', 429: 'Too Many Requests', 500: 'Internal Server Error',
  507: 'Insufficient Storage',
};

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: string[],
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Characters of one error message or detail line at most (escaping only, in practice: lvsd's own are shorter). */
const MAX_ERROR_TEXT = 4000;

function describeValidation(e: FastifyError): { message: string; details: string[] } {
  const ctx = e.validationContext ?? 'request';
  const details = (e.validation ?? []).map((v) => {
    const where = `${ctx}${v.instancePath.replace(/\//g, '.')}`;
    if (v.keyword === 'additionalProperties') return `${where}: unknown field "${String((v.params as { additionalProperty?: unknown }).additionalProperty)}"`;
    if (v.keyword === 'required') return `${where}: missing field "${String((v.params as { missingProperty?: unknown }).missingProperty)}"`;
    return `${where}: ${v.message ?? 'is invalid'}`;
  });
  return { message: details[0] ?? e.message, details };
}

export default fp(
  (app: Api) => {
    app.setErrorHandler((err: FastifyError, req, reply) => {
      let status = 500;
      let message = 'internal error';
      let details: string[] | undefined;
      if (err.validation) {
        status = 400;
        ({ message, details } = describeValidation(err));
      } else if (err instanceof HttpError) {
        status = err.statusCode;
        message = err.message;
        details = err.details;
      } else if (err instanceof StoreError) {
        status = err.code === 'not-found' ? 404 : err.code === 'conflict' ? 409 : 400;
        message = err.message;
      } else if (err instanceof DiskFullError) {
        // the message names a file and an errno, nothing secret; it is still an outage, so it is logged below
        status = 507;
        message = err.message;
      } else if (err instanceof DirectorRejection) {
        status = err.status;
        message = err.message;
      } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
        status = err.statusCode;
        message = err.message;
      }
      if (status >= 500) req.log.error({ err }, 'request failed');
      // Messages quote the request back (a path parameter, a user name): a bidi or control character in it
      // would reorder or recolour what the panel and a terminal show, so they are escaped as \uXXXX there.
      const safe = (text: string): string => echo(text, MAX_ERROR_TEXT);
      const body: { statusCode: number; error: string; message: string; details?: string[] } = { statusCode: status, error: STATUS_TEXT[status] ?? 'Error', message: safe(message) };
      if (details !== undefined && details.length > 0) body.details = details.map(safe);
      return reply.code(status).type('application/json').send(body);
    });
    app.setNotFoundHandler((req, reply) => reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no route ${req.method} ${req.url.split('?')[0] ?? ''}` }));
  },
  { name: 'lvsd-errors' },
);
