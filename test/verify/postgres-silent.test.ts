import test from 'ava';
import { TcpRelay } from '../drills/tcp-relay.js';
import { createCluster, postgresAvailable } from '../postgres/cluster.js';
import { PostgresLedgerReader } from '../../src/verify/postgres-reader.js';

if (await postgresAvailable()) {
  test('[postgres] verify\'s reader gives up on a database that went silent mid-read, instead of waiting for ever', async (t) => {
    const cluster = await createCluster(t);
    await cluster.start(1); // a migrated ledger to read
    const url = new URL(cluster.url);
    const relay = new TcpRelay(url.hostname, Number(url.port || 5432));
    await relay.listen();
    t.teardown(() => relay.close());
    url.port = String(relay.port);
    const reader = await PostgresLedgerReader.open(url.toString(), { queryTimeoutMs: 1_000 });
    t.teardown(() => reader.close());
    t.true(Array.isArray(await reader.accounts()), 'reads while the network carries');
    relay.cut(); // no FIN, no RST: the bytes just stop
    const began = Date.now();
    const error = await t.throwsAsync(reader.accounts());
    t.regex(error!.message, /timeout/i);
    t.true(Date.now() - began < 5_000, `gave up after ${Date.now() - began} ms`);
  });
}
