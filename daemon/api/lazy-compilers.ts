// Fastify compiles every route's request validators (ajv) and response serializers (fast-json-stringify) when
// the server becomes ready, in one run of microtasks that never yields to the event loop: ~0.7 s per API
// instance on a fast host, minutes in the TCG guest — and lvsd builds two (TCP and the local socket), after
// the VRRP engine is running. Meanwhile a VRRP transition waited in the queue: a new master switched its IPVS
// sync daemon to master only after the API's start (measured in the guest: 90 s later), syncing nothing till
// then. These factories hand fastify a stand-in per schema that compiles the real function the first time a
// request needs it, so the API's start compiles nothing and each route pays its compile once, on first use.
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaValidationError } from 'fastify';
import type { FastifyValidationResult } from 'fastify/types/schema.js';

type Validator = FastifyValidationResult & { schemaEnv?: unknown };
type Serializer = (doc: unknown) => string;

/** How many schemas have been compiled for real (the tests read it; it is never reset). */
export const compiledSchemas = { validators: 0, serializers: 0 };

/**
 * A validator that compiles on its first use. fastify reads `errors` after a failed call and `schemaEnv`
 * (ajv's) to decide whether to pass the parent object; both are forwarded from the compiled function.
 */
function lazyValidator(compile: () => Validator): Validator {
  let real: Validator | null = null;
  const get = (): Validator => {
    if (real === null) {
      real = compile();
      compiledSchemas.validators++;
    }
    return real;
  };
  const stand = ((data: unknown, ctx?: unknown) => (get() as (d: unknown, c?: unknown) => ReturnType<Validator>)(data, ctx)) as Validator;
  Object.defineProperty(stand, 'errors', {
    get: (): FastifySchemaValidationError[] | null | undefined => get().errors,
    set: (v: FastifySchemaValidationError[] | null | undefined) => { get().errors = v; },
  });
  Object.defineProperty(stand, 'schemaEnv', { get: () => get().schemaEnv });
  return stand;
}

function lazySerializer(compile: () => Serializer): Serializer {
  let real: Serializer | null = null;
  return (doc) => {
    if (real === null) {
      real = compile();
      compiledSchemas.serializers++;
    }
    return real(doc);
  };
}

const validatorFactory = AjvCompiler();
const serializerFactory = SerializerSelector();

/** fastify's own compilers (ajv, fast-json-stringify; same options), each route's compiled on first use. */
export const lazyCompilersFactory = {
  buildValidator: ((externalSchemas, options) => {
    const compile = validatorFactory(externalSchemas, options);
    return (route) => lazyValidator(() => compile(route) as Validator);
  }) as typeof validatorFactory,
  buildSerializer: ((externalSchemas, options) => {
    const compile = serializerFactory(externalSchemas, options);
    return (route) => lazySerializer(() => compile(route));
  }) as typeof serializerFactory,
};
