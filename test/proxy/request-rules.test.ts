// The proxy's pure rules: which requests are gated, and what a gated request claims.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { canonicalize } from '../../src/core/jcs.js';
import { claimTarget, queryObject, recordedRoute } from '../../src/proxy/command.js';
import { parseRoutes, RoutesFileError, defaultGate } from '../../src/proxy/routes-file.js';
import { parseDuration } from '../../src/proxy/options.js';
import { PROXY_ERROR_STATUS, ProxyError } from '../../src/proxy/errors.js';

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

test('by default POST, PUT, PATCH and DELETE are gated; GET, HEAD and OPTIONS pass', (t) => {
  const gate = defaultGate();
  for (const m of ['POST', 'put', 'PATCH', 'DELETE']) t.true(gate.isGated(m, '/x', true), m);
  for (const m of ['GET', 'HEAD', 'OPTIONS']) t.false(gate.isGated(m, '/x', true), m);
});

test('a routes file changes the default, first match wins, unmatched requests keep the default', (t) => {
  const gate = parseRoutes(JSON.stringify({ routes: [
    { method: 'POST', route: '/search', gated: false },
    { method: 'POST', route: '/tickets/*/comments', gated: false },
    { method: 'POST', route: '/tickets/*', gated: true },
    { method: 'GET', route: '/reports/*/export', gated: true },
  ] }));
  t.false(gate.isGated('POST', '/search', true));
  t.false(gate.isGated('POST', '/tickets/1/comments', true));
  t.true(gate.isGated('POST', '/tickets/1', true));
  t.true(gate.isGated('GET', '/reports/q3/export', true));
  t.false(gate.isGated('GET', '/reports/q3', true));
  t.true(gate.isGated('DELETE', '/search', true), 'another method keeps the default');
  t.true(gate.isGated('POST', '/search//x', false), 'a path with no route matches no entry and keeps the default (then refused as invalid_route)');
});

test('a routes file that does not parse or validate names the entry', (t) => {
  t.throws(() => parseRoutes('{"routes": [{"method": "POST", "route": "/x"}]}'), { instanceOf: RoutesFileError, message: /routes\[0\].*gated/ });
  t.throws(() => parseRoutes('{"routes": [{"method": "POST", "route": "/x*", "gated": true}]}'), { instanceOf: RoutesFileError, message: /routes\[0\]/ });
  t.throws(() => parseRoutes('{"routes": []', 'r.json'), { instanceOf: RoutesFileError, message: /^r\.json/ });
  t.throws(() => parseRoutes('{"paths": []}'), { instanceOf: RoutesFileError });
  t.throws(() => parseRoutes('{"routes": [{"method": "*", "route": "/x", "gated": true}]}'), { instanceOf: RoutesFileError, message: /routes\[0\]: "\*" is not a wildcard for methods/ });
});

test('a routes file entry an earlier one covers loads, never applies (the first match wins), and is warned about', (t) => {
  const text = JSON.stringify({ routes: [{ method: 'POST', route: '/s/*', gated: true }, { method: 'post', route: '/s/x', gated: false }] });
  const warnings: string[] = [];
  const shadowed = parseRoutes(text, 'r.json', (message) => warnings.push(message));
  t.true(shadowed.isGated('POST', '/s/x', true), 'the first match wins');
  t.is(warnings.length, 1);
  t.regex(warnings[0]!, /^r\.json: routes\[1\] \(POST \/s\/x\) can never apply: routes\[0\] \(POST \/s\/\*\)/);
  // The same route twice: the first says.
  const twice = parseRoutes(JSON.stringify({ routes: [{ method: 'POST', route: '/x', gated: false }, { method: 'POST', route: '/x', gated: true }] }));
  t.false(twice.isGated('POST', '/x', true));
  // The specific entry first is the way to say it.
  const gate = parseRoutes(JSON.stringify({ routes: [{ method: 'POST', route: '/s/x', gated: false }, { method: 'POST', route: '/s/*', gated: true }] }));
  t.false(gate.isGated('POST', '/s/x', true));
  t.true(gate.isGated('POST', '/s/y', true));
});

test('the command: the JSON body, null without one, and {"body", "query"} with a query string', (t) => {
  t.deepEqual(claimTarget('/tickets', '', json({ a: 1 }), 'application/json'), { route: '/tickets', command: { a: 1 } });
  t.deepEqual(claimTarget('/tickets/1', '', Buffer.alloc(0), undefined), { route: '/tickets/1', command: null });
  t.deepEqual(claimTarget('/tickets', '', json({ a: 1 }), 'application/merge-patch+json; charset=utf-8').command, { a: 1 });
  t.deepEqual(claimTarget('/tickets', 'x=1&y=a+b&x=%C3%A9', json([1]), 'application/json').command, { body: [1], query: { x: ['1', 'é'], y: ['a b'] } });
  t.deepEqual(claimTarget('/tickets', '', json({ body: 1, query: 2 }), 'application/json').command, { body: { body: 1, query: 2 }, query: {} });
  t.deepEqual(claimTarget('/tickets', '&', Buffer.alloc(0), undefined).command, null, 'an empty query is no query');
});

test('a path that is a route but for a trailing slash is recorded under the route, its exact path in the command; other invalid paths have no route', (t) => {
  t.deepEqual(recordedRoute('/items/'), { route: '/items', trailingSlash: true });
  t.deepEqual(recordedRoute('/items/7/'), { route: '/items/7', trailingSlash: true });
  t.deepEqual(recordedRoute('/items'), { route: '/items', trailingSlash: false });
  t.deepEqual(recordedRoute('/'), { route: '/', trailingSlash: false });
  for (const path of ['/items//', '//', '/a/./', '/a/%2f/', '/a//b/']) t.is(recordedRoute(path), null, path);
  t.deepEqual(claimTarget('/items/', '', json({ a: 1 }), 'application/json'), { route: '/items', command: { body: { a: 1 }, query: {}, path: '/items/' } });
  t.deepEqual(claimTarget('/items/', 'q=1', Buffer.alloc(0), undefined), { route: '/items', command: { body: null, query: { q: ['1'] }, path: '/items/' } });
});

test('a routes-file entry for a route applies to its trailing-slash spelling too', (t) => {
  const gate = parseRoutes(JSON.stringify({ routes: [{ method: 'POST', route: '/search', gated: false }] }));
  const recorded = recordedRoute('/search/')!;
  t.false(gate.isGated('POST', recorded.route, true));
});

test('no two different requests share a command (the JCS of the command differs)', (t) => {
  const requests: Array<[string, unknown]> = [
    ['', null], ['', { body: null, query: { a: ['1'] } }], ['a=1', null], ['a=1', { body: null, query: { a: ['1'] } }],
    ['', { body: null, query: {} }], ['a=1&a=2', null], ['a=2&a=1', null], ['a=1&b=2', null],
    ['', { body: null, query: {}, path: '/x/' }], ['', { body: null, query: { a: ['1'] }, path: '/x/' }],
  ];
  const seen = new Set<string>();
  for (const [query, body] of requests) {
    const raw = body === null ? Buffer.alloc(0) : json(body);
    seen.add(canonicalize(claimTarget('/x', query, raw, 'application/json').command));
  }
  // The same requests to /x/ are recorded under the route /x as well: none shares a command with any above.
  for (const [query, body] of requests) {
    const raw = body === null ? Buffer.alloc(0) : json(body);
    seen.add(canonicalize(claimTarget('/x/', query, raw, 'application/json').command));
  }
  t.is(seen.size, 2 * requests.length);
  t.is(canonicalize(claimTarget('/x', 'b=2&a=1', Buffer.alloc(0), undefined).command), canonicalize(claimTarget('/x', 'a=1&b=2', Buffer.alloc(0), undefined).command));
});

test('a parameter named __proto__ is a name like any other', (t) => {
  t.deepEqual(Object.keys(queryObject('__proto__=1')!), ['__proto__']);
  t.is(canonicalize(queryObject('__proto__=1')!), '{"__proto__":["1"]}');
});

test('refusals: non-JSON bodies 415, strict JSON failures with the service\'s codes, invalid routes 400', (t) => {
  const code = (fn: () => unknown) => (t.throws(fn, { instanceOf: ProxyError }) as ProxyError).code;
  t.is(code(() => claimTarget('/x', '', Buffer.from('a=1'), 'application/x-www-form-urlencoded')), 'unsupported_media_type');
  t.is(code(() => claimTarget('/x', '', Buffer.from('{}'), undefined)), 'unsupported_media_type');
  t.is(code(() => claimTarget('/x', '', Buffer.from('{"a":1,"a":2}'), 'application/json')), 'duplicate_member');
  t.is(code(() => claimTarget('/x', '', Buffer.from('{"a":9007199254740993}'), 'application/json')), 'unsafe_number');
  t.is(code(() => claimTarget('/x', '', Buffer.from('{"a":'), 'application/json')), 'invalid_json');
  t.is(code(() => claimTarget('/x//', '', Buffer.alloc(0), undefined)), 'invalid_route');
  t.is(code(() => claimTarget('/x/%2f', '', Buffer.alloc(0), undefined)), 'invalid_route');
  t.is(code(() => claimTarget('/x/./', '', Buffer.alloc(0), undefined)), 'invalid_route');
});

test('durations: 30s, 500ms, 2m, plain seconds', (t) => {
  t.is(parseDuration('30s'), 30_000);
  t.is(parseDuration('500ms'), 500);
  t.is(parseDuration('2m'), 120_000);
  t.is(parseDuration('5'), 5_000);
  t.throws(() => parseDuration('soon'));
  t.throws(() => parseDuration('0s'), { message: 'must be more than 0, like 30s or 500ms (not "0s")' });
  t.throws(() => parseDuration('0.2ms'), { message: /must be more than 0/ }, 'a duration that rounds to 0 ms is none');
});

test('every code the proxy answers itself has a row with its status in docs/proxy.md, and every row is one of them', (t) => {
  const doc = readFileSync(new URL('../../docs/proxy.md', import.meta.url), 'utf8');
  const section = doc.split(/^## Error codes\s*$/m)[1] ?? '';
  const documented = new Set([...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`));
  const answered = new Set(Object.entries(PROXY_ERROR_STATUS).map(([code, status]) => `${code} ${status}`));
  answered.add('upstream_unknown 504'); // the timeout's status
  t.deepEqual([...answered].filter((e) => !documented.has(e)), []);
  t.deepEqual([...documented].filter((e) => !answered.has(e)), []);
});
