import test from 'ava';
import { addPrincipalWith } from '../helpers/server-process.js';
import { createCluster, postgresAvailable } from './cluster.js';
import { claim, claimBody, seqGaps, verifyOnlineAndExported } from './traffic.js';

if (await postgresAvailable()) {
  test('[postgres] 200 identical claims at once, spread over two instances, give exactly one execute and a gapless chain that verifies', async (t) => {
    const cluster = await createCluster(t);
    const instances = await cluster.start(2);
    const key = await addPrincipalWith(cluster.storeArgs, 'acme', ['gateway']);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => claim(instances[i % 2]!.url, key, 'pay-invoice-7', claimBody(7))));

    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    t.deepEqual([...byStatus].sort(), [[201, 1], [409, 199]], 'one created, every other one in_progress');
    t.is(answers.filter((a) => a.body?.execute === true).length, 1);
    t.true(answers.filter((a) => a.status === 409).every((a) => a.body.outcome === 'in_progress' && a.body.execute === false));
    t.is(new Set(answers.map((a) => a.body.operation.id)).size, 1, 'every answer names the same operation');

    const events = await cluster.query<{ type: string; n: string }>(`select type, count(*) as n from events where account_id = 'acme' group by type order by type`);
    t.deepEqual(events.map((e) => [e.type, Number(e.n)]), [['attempted', 1], ['retried', 199]]);
    t.deepEqual(await seqGaps(cluster), []);
    const report = await verifyOnlineAndExported(t, cluster, instances[0]!.url);
    t.deepEqual(report.accounts.find((a) => a.account_id === 'acme')?.events, 200);
  });

  test('[postgres] identical claims racing over three instances never deadlock: each transaction locks the chain head before any row', async (t) => {
    const cluster = await createCluster(t);
    const instances = await cluster.start(3);
    const key = await addPrincipalWith(cluster.storeArgs, 'acme', ['gateway']);
    // A batch that holds the head and inserts (or locks) a key another instance's transaction
    // inserted (or locked) a moment before, while that one waits for the head, is a deadlock:
    // PostgreSQL finds it after deadlock_timeout (1 s) and aborts one, which runs again; every
    // claim in it waits that second. Before the head was locked first, 2 to 9 in these ten rounds.
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => claim(instances[i % 3]!.url, key, `race-${round}`, claimBody(round))));
      t.is(answers.filter((a) => a.status === 201).length, 1, `round ${round}: one created`);
    }
    // A backend's deadlock count reaches pg_stat_database by the time it exits: stop the instances and wait for their sessions to end.
    await Promise.all(instances.map((i) => i.stop()));
    for (let waited = 0; waited < 10_000; waited += 100) {
      const [open] = await cluster.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and application_name = 'gatehouse'`);
      if (Number(open!.n) === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const [stats] = await cluster.query<{ deadlocks: string }>('select deadlocks from pg_stat_database where datname = current_database()');
    t.is(Number(stats!.deadlocks), 0, 'deadlocks PostgreSQL detected in this database');
  });

  test('[postgres] claims under distinct keys with one business_key and one exclusive_scope, over two instances: one created, every other reused, never scope_busy', async (t) => {
    const cluster = await createCluster(t);
    const instances = await cluster.start(2);
    const key = await addPrincipalWith(cluster.storeArgs, 'acme', ['gateway']);
    for (let round = 0; round < 4; round++) {
      const body = { ...claimBody(round), business_key: `alert-${round}`, exclusive_scope: `env-${round}` };
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => claim(instances[i % 2]!.url, key, `alert-${round}-key-${i}`, body)));
      const outcomes = new Map<string, number>();
      for (const a of answers) {
        const outcome = a.body?.outcome ?? a.body?.error?.code ?? String(a.status);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      t.deepEqual([...outcomes].sort(), [['created', 1], ['reused', 39]], `round ${round}`);
      t.is(new Set(answers.map((a) => a.body.operation?.id)).size, 1, 'every answer names the operation that has the business key');
    }
  });
}
