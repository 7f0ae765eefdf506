import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { startMetricsListener } from '../../src/http/routes/metrics.js';
import { claim, completedOperation, ticketClaim } from '../operations/claims.js';

/** The value of one sample line, e.g. `gatehouse_claims_total{outcome="created"}`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

for (const kind of await storeKinds()) {
  test(`[${kind}] GET /metrics counts claims by outcome, commits, request latency by route template and stored events`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const done = await completedOperation(app, gw, 'k-1', { status: 201, body: { id: 1 } });
    t.is((await claim(app, gw, 'k-1', ticketClaim())).body.outcome, 'replayed');
    t.is((await claim(app, gw, 'k-1', ticketClaim('another payload'))).status, 422);
    t.is((await claim(app, gw, 'k-2', ticketClaim('second'))).status, 201);

    t.is((await app.request('GET', '/metrics')).status, 401, 'no key, no metrics');
    t.is((await app.request('GET', '/metrics', { key: gw })).status, 403, 'a gateway key is not enough');
    const res = await app.request('GET', '/metrics', { key: app.adminKey });
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = res.text;
    t.is(sample(text, 'gatehouse_claims_total{outcome="created"}'), 2);
    t.is(sample(text, 'gatehouse_claims_total{outcome="replayed"}'), 1);
    t.is(sample(text, 'gatehouse_claims_total{outcome="fingerprint_mismatch"}'), 1);
    t.true((sample(text, 'gatehouse_store_batch_size_count') ?? 0) >= 5, 'every write was committed and observed');
    t.true((sample(text, 'gatehouse_store_commit_seconds_count') ?? 0) >= 5);
    const events = await app.context.store.db.selectFrom('events').select('seq').execute();
    t.is(sample(text, 'gatehouse_events_appended_total'), events.length, 'events are read from what the database holds');
    t.true(text.includes('# TYPE gatehouse_events_appended_total counter'), 'a counter: rate() of events appended');
    t.true(text.includes(`gatehouse_http_request_duration_seconds_count{method="POST",route="/v1/operations",status="201"} 2`));
    t.true(text.includes('route="/v1/operations/:id/events"'), 'ids never become labels');
    t.false(text.includes(done.operation.id));
    t.true(text.includes('gatehouse_webhook_backlog 0'));
  });
}

test('[sqlite] checkpoint age is reported per account, and the unauthenticated listener serves the same text', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  await completedOperation(app, gw, 'k-1', { status: 201 });
  t.is((await app.request('POST', '/v1/audit/checkpoints', { key: app.adminKey, body: { account_id: 'acme' } })).status, 201);
  const listener = await startMetricsListener(app.context.metrics, '127.0.0.1', 0);
  t.teardown(() => listener.close());
  const text = await (await fetch(listener.url)).text();
  const age = sample(text, 'gatehouse_checkpoint_age_seconds{account_id="acme"}');
  t.true(age !== undefined && age >= 0 && age < 60, `age ${age}`);
  t.is((await fetch(listener.url.replace('/metrics', '/other'))).status, 404);
});

test('[sqlite] the metrics listener answers what it does not serve with the service\'s JSON errors', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const listener = await startMetricsListener(app.context.metrics, '127.0.0.1', 0);
  t.teardown(() => listener.close());
  const unknown = await fetch(listener.url.replace('/metrics', '/nope'));
  t.is(unknown.status, 404);
  t.is(unknown.headers.get('content-type'), 'application/json');
  t.is(((await unknown.json()) as { error: { code: string } }).error.code, 'not_found');
  const posted = await fetch(listener.url, { method: 'POST' });
  t.is(posted.status, 405);
  t.is(posted.headers.get('allow'), 'GET, HEAD');
  t.is(((await posted.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  const head = await fetch(listener.url, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(await head.text(), '');
});
