import test from 'ava';
import type Router from '@koa/router';
import openapi from '../../schema/openapi.json' with { type: 'json' };
import { routeModules } from '../../src/http/server.js';
import { startTestApp } from '../helpers/app.js';

/** Koa-router's `:id` segments are OpenAPI's `{id}`. */
function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

test('every route the routers serve is in the OpenAPI document', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const documented = openapi.paths as Record<string, Record<string, unknown>>;
  const missing: string[] = [];
  let seen = 0;
  for (const module of routeModules(app.context)) {
    for (const layer of (module.router as Router).stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        seen++;
        const path = toOpenApiPath(String(layer.path));
        if (!documented[path]?.[method.toLowerCase()]) missing.push(`${method} ${path}`);
      }
    }
  }
  t.true(seen > 10, `walked ${seen} routes`);
  t.deepEqual(missing, []);
});

test('the document is served at /v1/openapi.json without a key', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const response = await app.request('GET', '/v1/openapi.json');
  t.is(response.status, 200);
  t.is(response.body.openapi, '3.1.0');
});
