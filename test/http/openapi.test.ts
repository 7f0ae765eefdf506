import fs from 'node:fs';
import test from 'ava';
import type Router from '@koa/router';
import openapi from '../../schema/openapi.json' with { type: 'json' };
import { routeModules } from '../../src/http/server.js';
import { REQUEST_SCHEMAS } from '../../src/http/request-schemas.js';
import { servedOpenapi } from '../../src/http/routes/openapi.js';
import { startTestApp } from '../helpers/app.js';
import { ANY_QUERY, type QueryDeclaration } from '../../src/http/declared-queries.js';

type Operation = { requestBody?: { content: Record<string, { schema: { $ref?: string } }> }; parameters?: Array<{ in?: string; name?: string }> };
const documented = openapi.paths as Record<string, Record<string, Operation>>;
const components = openapi.components.schemas as Record<string, { $ref?: string }>;

/** Koa-router's `:id` segments are OpenAPI's `{id}`. */
function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/** Every route the routers serve, as "METHOD /path" (koa form), with the module's body validators. */
async function servedRoutes(t: Parameters<typeof startTestApp>[0]) {
  const app = await startTestApp(t, 'sqlite');
  const routes: Array<{ method: string; path: string }> = [];
  const bodies = new Map<string, string>();
  const queries = new Map<string, QueryDeclaration>();
  for (const module of routeModules(app.context)) {
    for (const layer of (module.router as Router).stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) routes.push({ method, path: String(layer.path) });
    }
    for (const [route, validator] of Object.entries(module.bodies ?? {})) bodies.set(route, validator.schemaId);
    for (const [route, declared] of Object.entries(module.queries ?? {})) queries.set(route, declared);
  }
  return { routes, bodies, queries };
}

/** The file schema/openapi.json names for a route's JSON body: `#/components/schemas/X` whose X is `{"$ref": "requests/<id>.json"}`. */
function documentedBodySchema(method: string, path: string): string | undefined {
  const ref = documented[toOpenApiPath(path)]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.schema.$ref;
  if (ref === undefined) return undefined;
  const component = components[ref.replace('#/components/schemas/', '')]?.$ref;
  return component?.match(/^requests\/(.+)\.json$/)?.[1] ?? `not a schema/requests file: ${ref} → ${component}`;
}

test('the routers serve exactly the routes the OpenAPI document lists', async (t) => {
  const { routes } = await servedRoutes(t);
  t.true(routes.length > 10, `walked ${routes.length} routes`);
  const served = new Set(routes.map((r) => `${r.method} ${toOpenApiPath(r.path)}`));
  const listed = Object.entries(documented).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  t.deepEqual([...served].filter((r) => !listed.includes(r)), [], 'served but not documented');
  t.deepEqual(listed.filter((r) => !served.has(r)), [], 'documented but not served');
});

test('each JSON request body is validated with the schema the OpenAPI document refers to, from schema/requests', async (t) => {
  const { routes, bodies } = await servedRoutes(t);
  for (const { method, path } of routes) {
    const route = `${method} ${path}`;
    t.is(bodies.get(route), documentedBodySchema(method, path), route);
  }
  const served = new Set(routes.map((r) => `${r.method} ${r.path}`));
  t.deepEqual([...bodies.keys()].filter((r) => !served.has(r)), [], 'a body validator names a route no router serves');
  // Every schema file is loaded by the edge and used by a route.
  const files = fs.readdirSync(new URL('../../schema/requests/', import.meta.url)).map((f) => f.replace(/\.json$/, '')).sort();
  t.deepEqual(Object.keys(REQUEST_SCHEMAS).sort(), files);
  t.deepEqual([...new Set(bodies.values())].sort(), files);
});

test('each /v1/ route takes exactly the query parameters the OpenAPI document lists for it', async (t) => {
  const { routes, queries } = await servedRoutes(t);
  for (const { method, path } of routes.filter((r) => r.path.startsWith('/v1/'))) {
    const route = `${method} ${path}`;
    const declared = queries.get(route) ?? [];
    const listed = (documented[toOpenApiPath(path)]?.[method.toLowerCase()]?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    // A route that reads no query and may be sent any (the health check) documents none.
    t.deepEqual(declared === ANY_QUERY ? [] : [...declared].sort(), listed.sort(), route);
  }
  const served = new Set(routes.map((r) => `${r.method} ${r.path}`));
  t.deepEqual([...queries.keys()].filter((r) => !served.has(r) || !r.includes(' /v1/')), [], 'a query declaration names a route no router serves, or one outside /v1/');
});

test('the document states no request body itself: its request components all refer to schema/requests', (t) => {
  for (const name of ['Claim', 'Intent', 'Report', 'Resolve', 'CreatePrincipal', 'Decision', 'CreateCheckpoint']) {
    t.regex(components[name]?.$ref ?? '', /^requests\/[a-z-]+\.json$/, name);
  }
});

test('the served document inlines the request schemas and every reference in it resolves', (t) => {
  const served = servedOpenapi();
  const text = JSON.stringify(served);
  const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  t.true(refs.length > 10);
  const schemas = served.components.schemas as Record<string, unknown>;
  for (const ref of refs) {
    t.regex(ref, /^#\/components\/schemas\//, ref);
    t.truthy(schemas[ref.replace('#/components/schemas/', '')], ref);
  }
  const claim = schemas.Claim as { properties: Record<string, unknown> };
  const { $id: _id, ...expected } = REQUEST_SCHEMAS['claim-operation'] as Record<string, unknown>;
  t.deepEqual(claim, expected);
  t.deepEqual(claim.properties.agent_run_id, { type: ['string', 'null'], minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*$' });
});

test('the document is served at /v1/openapi.json to any valid key, and to no one without one (only keys and healthz are open: docs/http-api.md)', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const keyless = await app.request('GET', '/v1/openapi.json');
  t.is(keyless.status, 401);
  t.is(keyless.body.error.code, 'unauthenticated');
  const approver = await app.keyFor('acme', 'approver');
  const response = await app.request('GET', '/v1/openapi.json', { key: approver });
  t.is(response.status, 200);
  t.is(response.body.openapi, '3.1.0');
  t.deepEqual(response.body, JSON.parse(JSON.stringify(servedOpenapi())));
});
