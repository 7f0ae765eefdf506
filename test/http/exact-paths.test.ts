import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RouterContext } from '@koa/router';
import Koa from 'koa';
import { exactPathsFirst } from '../../src/http/exact-paths.js';
import { newRouter } from '../../src/http/route-module.js';

/** A router in the shapes the index must leave to the router: a parameter route declared before a static one it also matches. */
async function serve(t: ExecutionContext): Promise<string> {
  const router = newRouter();
  const seen = (ctx: RouterContext, name: string) => {
    ctx.body = { name, route: ctx._matchedRoute ?? null, params: ctx.params };
  };
  router.get('/things/:id', (ctx) => seen(ctx, 'one thing'));
  router.get('/things/latest', (ctx) => seen(ctx, 'latest'));
  router.get('/things', (ctx) => seen(ctx, 'list'));
  router.post('/things', (ctx) => {
    seen(ctx, 'created');
    ctx.status = 201;
  });
  const app = new Koa();
  app.use(exactPathsFirst(router, () => {}));
  app.use(router.allowedMethods());
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function ask(url: string, method = 'GET'): Promise<{ status: number; body: unknown; allow: string | null }> {
  const response = await fetch(url, { method });
  const text = await response.text();
  return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, allow: response.headers.get('allow') };
}

test('an exact path is answered by its route, labelled by its template, with no parameters', async (t) => {
  const url = await serve(t);
  t.deepEqual(await ask(`${url}/things`), { status: 200, body: { name: 'list', route: '/things', params: {} }, allow: null });
  t.deepEqual((await ask(`${url}/things`, 'POST')).body, { name: 'created', route: '/things', params: {} });
  t.is((await ask(`${url}/things`, 'HEAD')).status, 200, 'HEAD is answered as the router answers it for a GET route');
});

test('a static route that an earlier route also matches is answered in the router\'s order, not the index\'s', async (t) => {
  const url = await serve(t);
  t.deepEqual((await ask(`${url}/things/latest`)).body, { name: 'one thing', route: '/things/:id', params: { id: 'latest' } });
});

test('other spellings of a path are unknown to the index and the router alike; parameters and unknown methods go through the router', async (t) => {
  const url = await serve(t);
  t.is((await ask(`${url}/things/`)).status, 404, 'a trailing slash');
  t.is((await ask(`${url}/THINGS`)).status, 404, 'other letter case');
  t.is((await ask(`${url}/things/7/`)).status, 404, 'a trailing slash after a parameter');
  t.deepEqual((await ask(`${url}/things/7`)).body, { name: 'one thing', route: '/things/:id', params: { id: '7' } });
  const refused = await ask(`${url}/things`, 'DELETE');
  t.is(refused.status, 405);
  t.deepEqual(refused.allow?.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
  t.is((await ask(`${url}/nothing`)).status, 404);
});
