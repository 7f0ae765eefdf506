import openapi from '../../../schema/openapi.json' with { type: 'json' };
import { InvariantError } from '../../core/errors.js';
import { REQUEST_SCHEMAS } from '../request-schemas.js';
import { newRouter, type RouteModule } from '../route-module.js';

const REQUEST_REF = /^requests\/([a-z0-9-]+)\.json$/;

/**
 * The document as served. schema/openapi.json refers to the request schemas by file
 * (`{"$ref": "requests/claim-operation.json"}`, relative to itself) so that each body's shape is
 * written once; a reader of /v1/openapi.json has no such file, so each of those references is
 * replaced by the schema it names.
 */
export function servedOpenapi(): typeof openapi {
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(openapi.components.schemas)) {
    const ref = (schema as { $ref?: string }).$ref?.match(REQUEST_REF);
    if (!ref) {
      schemas[name] = schema;
      continue;
    }
    const target = REQUEST_SCHEMAS[ref[1]!];
    if (!target) throw new InvariantError(`schema/openapi.json refers to requests/${ref[1]}.json, which src/http/request-schemas.ts does not load`);
    const { $id: _id, ...inlined } = target;
    schemas[name] = inlined;
  }
  return { ...openapi, components: { ...openapi.components, schemas: schemas as typeof openapi.components.schemas } };
}

/**
 * The OpenAPI 3.1 document of every route; a test walks the routers and fails on any route it lacks.
 * Any valid key reads it: only GET /v1/keys and GET /v1/healthz need none (docs/http-api.md),
 * and the same document ships without a key in the package and the repository (schema/).
 */
export function openapiRoutes(): RouteModule {
  const document = servedOpenapi();
  const router = newRouter();
  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = document;
  });
  return { router };
}
