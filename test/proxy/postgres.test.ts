// The 30-concurrent-POST drill through `gatehouse proxy` with Gatehouse on PostgreSQL: the unique
// constraint decides there too, so one write reaches the upstream.
import test from 'ava';
import { createTestStore, storeKinds } from '../helpers/stores.js';
import { call, startProxyEnv } from './env.js';

if ((await storeKinds()).includes('postgres')) {
  test('[postgres] 30 concurrent identical POSTs with one key through the proxy make one upstream write', async (t) => {
    const store = await createTestStore('postgres');
    const env = await startProxyEnv({ storeArgs: store.cliArgs });
    t.teardown(async () => {
      await env.close();
      await store.drop();
    });
    const key = `pg-concurrent-${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 30 }, () =>
      call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'printer on fire' }, headers: { 'x-delay-ms': '300' } })));
    t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
    t.is(answers.filter((a) => a.headers.get('gatehouse-outcome') === 'created').length, 1);
    t.true(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.outcome === 'in_progress')), answers.map((a) => a.status).join());
    const replay = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'printer on fire' } });
    t.is(replay.headers.get('idempotent-replayed'), 'true');
  });
} else {
  test('[postgres] proxy drill skipped: PostgreSQL is not reachable', (t) => t.pass());
}
