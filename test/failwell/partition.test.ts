import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnGatehouse } from '../helpers/server-process.js';
import { createCluster, postgresAvailable } from '../postgres/cluster.js';
import { claim } from '../postgres/traffic.js';
import { TcpRelay } from '../drills/tcp-relay.js';

const withPostgres = await postgresAvailable();

/** The default request deadline; an outage answer must reach the client within it (the service answers a little before it). */
const DEADLINE_MS = 10_000;

if (withPostgres) {
  test('[postgres] a partition from the database: claims answer 503 store_unavailable within the deadline, healthz 503 at once, and service resumes within seconds of the network', async (t) => {
    t.timeout(180_000);
    const cluster = await createCluster(t);
    const url = new URL(cluster.url);
    const relay = new TcpRelay(url.hostname, Number(url.port || 5432));
    await relay.listen();
    t.teardown(() => relay.close());
    const viaRelay = new URL(cluster.url);
    viaRelay.port = String(relay.port);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-partition-'));
    t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const instance = await spawnGatehouse({ args: ['--data-dir', scratch], env: { ...cluster.env, GATEHOUSE_DATABASE_URL: viaRelay.toString() }, name: 'gatehouse serve (through the relay)' });
    t.teardown(() => instance.stop());
    const principal = await fetch(`${instance.url}/v1/principals`, {
      method: 'POST', headers: { authorization: `Bearer ${instance.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: 'acme', roles: ['gateway'] }),
    });
    const { key } = (await principal.json()) as { key: string };
    const body = (n: number) => ({ method: 'POST', route: '/tickets', command: { n } });
    t.is((await claim(instance.url, key, 'before', body(0))).status, 201);

    relay.cut();
    const cutAt = Date.now();
    const [during, health] = await Promise.all([
      claim(instance.url, key, 'during', body(1)).then((a) => ({ ...a, ms: Date.now() - cutAt })),
      fetch(`${instance.url}/v1/healthz`).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), ms: Date.now() - cutAt })),
    ]);
    t.is(health.status, 503);
    t.is(health.retryAfter, '1');
    t.true(health.ms < 5_000, `healthz answered in ${health.ms} ms`);
    t.is(during.status, 503, JSON.stringify(during.body));
    t.is(during.body?.error?.code, 'store_unavailable');
    t.true(during.ms < DEADLINE_MS, `the claim was answered in ${during.ms} ms`);

    relay.heal();
    const healedAt = Date.now();
    let healthy = false;
    while (!healthy && Date.now() - healedAt < 20_000) {
      healthy = (await fetch(`${instance.url}/v1/healthz`).then((r) => r.status, () => 0)) === 200;
      if (!healthy) await new Promise((r) => setTimeout(r, 200));
    }
    const recoveredMs = Date.now() - healedAt;
    t.true(healthy && recoveredMs < 10_000, `healthy again ${recoveredMs} ms after the network came back`);
    // The claim answered 503 during the partition is retried with its key: either it never ran
    // (201 now) or it committed after all (409 in_progress) — never a second execution.
    const retried = await claim(instance.url, key, 'during', body(1));
    t.true(retried.status === 201 || (retried.status === 409 && retried.body?.outcome === 'in_progress'), JSON.stringify(retried.body));
    t.is((await claim(instance.url, key, 'after', body(2))).status, 201);
    t.true(instance.process.alive);
    t.log(`healthz 503 after ${health.ms} ms, claim 503 after ${during.ms} ms, healthy ${recoveredMs} ms after healing`);
  });
}
