import fs from 'node:fs';
import test from 'ava';
import { createCluster, gatewayKeys, postgresAvailable, type Cluster } from './cluster.js';
import { AckLog, claim, claimBody, missingAcks, report, seqGaps, verifyOnlineAndExported, type Answer } from './traffic.js';

const WORKERS = 8;

/** Ends the service's database sessions (not the harness's own) `rounds` times, `pauseMs` apart; how many it ended. */
async function terminateSessions(cluster: Cluster, rounds: number, pauseMs: number): Promise<number> {
  let terminated = 0;
  for (let round = 0; round < rounds; round++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    const rows = await cluster.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name <> 'gatehouse-test-harness'`);
    terminated += rows.filter((r) => r.ended).length;
  }
  return terminated;
}

if (await postgresAvailable()) {
  test('[postgres] sessions terminated under concurrent claims: the instance stays up, answers 503 or the truth, loses nothing and runs no key twice', async (t) => {
    const cluster = await createCluster(t);
    const [instance] = await cluster.start(1);
    const [key] = await gatewayKeys(cluster, ['acme']);
    const log = new AckLog();
    const executions = new Map<string, number>();
    let unavailable = 0;
    let stop = false;

    // A 503 store_unavailable is an honest answer during the outage: the worker retries the same request.
    const retrying = async (what: string, send: () => Promise<Answer>): Promise<Answer | null> => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const answer = await send();
        if (answer.status !== 503) return answer;
        t.is(answer.body?.error?.code, 'store_unavailable', `${what}: ${JSON.stringify(answer.body)}`);
        unavailable++;
        await new Promise((r) => setTimeout(r, 50));
      }
      log.surprises.push(`${what}: still 503 after 100 tries`);
      return null;
    };

    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const idem = `w${w}-${i}`;
        const body = claimBody(i);
        const claimed = await retrying(`claim ${idem}`, () => claim(instance!.url, key!, idem, body));
        if (!claimed) continue;
        if (claimed.status === 409 && claimed.body?.outcome === 'in_progress') continue; // a commit whose answer was lost: never re-run
        if (!log.expect(`claim ${idem}`, claimed, 201, 'created')) continue;
        executions.set(idem, (executions.get(idem) ?? 0) + 1);
        const op = claimed.body.operation.id as string;
        const lease = claimed.body.lease.token as string;
        log.ack('acme', op, 'attempted');
        const sent = await retrying(`sent ${op}`, () => report(instance!.url, key!, op, { type: 'sent', lease_token: lease }));
        if (!sent || !log.expect(`sent ${op}`, sent, 200)) continue;
        log.ack('acme', op, 'sent');
        const done = await retrying(`completed ${op}`, () =>
          report(instance!.url, key!, op, { type: 'completed', lease_token: lease, outcome: 'succeeded', response: { status: 201, body: { n: i } } }));
        if (!done || !log.expect(`completed ${op}`, done, 200)) continue;
        log.ack('acme', op, 'completed');
      }
    };

    // A reset means the instance died: say why, from its own stderr, instead of a bare ECONNRESET.
    const workers = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w))).catch((error) => {
      fs.writeFileSync('/tmp/lost-stderr.log', instance!.process.stderr);
      throw new Error(`${error}\ninstance alive: ${instance!.process.alive}\ninstance stderr: ${instance!.process.stderr.slice(-3000)}`);
    });
    const terminated = await terminateSessions(cluster, 6, 400);
    // Traffic goes on until it has been acknowledged enough to mean something: a fixed time gave 48
    // acknowledged events under a full suite at load 10 (and > 50 when quiet).
    const enoughBy = Date.now() + 20_000;
    do await new Promise((r) => setTimeout(r, 500));
    while (log.acks.length <= 50 && Date.now() < enoughBy);
    stop = true;
    await workers;

    t.true(terminated >= 6, `terminated ${terminated} sessions`);
    t.true(instance!.process.alive, `the instance is still running: ${instance!.process.stderr.slice(-2000)}`);
    const health = await fetch(`${instance!.url}/v1/healthz`);
    t.is(health.status, 200, 'serving again');
    t.deepEqual(log.surprises, [], 'every answer was the contract\'s or 503 store_unavailable');
    t.deepEqual([...executions].filter(([, n]) => n > 1), [], 'no key was executed twice');
    t.true(log.acks.length > 50, `${log.acks.length} acknowledged events`);
    t.deepEqual(await missingAcks(cluster, log.acks), [], 'every acknowledged event is stored');
    t.deepEqual(await seqGaps(cluster), []);
    await verifyOnlineAndExported(t, cluster, instance!.url);
    t.log(`${terminated} sessions terminated, ${unavailable} answers 503, ${log.acks.length} acknowledged events`);
  });
}

if (await postgresAvailable()) {
  test('[postgres] sessions terminated under concurrent reads: every answer is 200 or 503 store_unavailable, never 500 internal', async (t) => {
    const cluster = await createCluster(t);
    // Its logs are read below: an error-level line would be a request answered as a bug.
    const [instance] = await cluster.start(1, { GATEHOUSE_LOG_LEVEL: 'warn' });
    const admin = instance!.adminKey!;
    // Several gateway keys, so key lookups (cached for a few seconds) keep reaching the database too.
    const keys = await gatewayKeys(cluster, Array.from({ length: 6 }, () => 'acme'));
    const ops: string[] = [];
    for (let i = 0; i < 6; i++) {
      const claimed = await claim(instance!.url, keys[0]!, `read-${i}`, claimBody(i));
      t.is(claimed.status, 201, JSON.stringify(claimed.body));
      ops.push(claimed.body.operation.id as string);
    }
    const paths = [
      ...ops.map((id) => `/v1/operations/${id}`),
      ...ops.map((id) => `/v1/operations/${id}/timeline`),
      '/v1/operations?account_id=acme&limit=5',
      '/v1/audit/events?account_id=acme&limit=50',
    ];
    const answers = new Map<string, number>();
    const internal: string[] = [];
    let stop = false;
    const reader = async (r: number) => {
      for (let i = 0; !stop; i++) {
        const path = paths[(r + i) % paths.length]!;
        const key = path.startsWith('/v1/audit') ? admin : keys[(r + i) % keys.length]!;
        const response = await fetch(`${instance!.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await response.json()) as { error?: { code?: string } };
        const label = `${response.status} ${body.error?.code ?? ''}`.trim();
        answers.set(label, (answers.get(label) ?? 0) + 1);
        if (response.status === 500) internal.push(path);
      }
    };
    const readers = Promise.all(Array.from({ length: WORKERS }, (_, r) => reader(r)));
    const terminated = await terminateSessions(cluster, 12, 150);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await readers;
    t.log(`${terminated} sessions terminated; answers ${JSON.stringify(Object.fromEntries(answers))}`);
    t.true(terminated >= 6, `terminated ${terminated} sessions`);
    t.deepEqual(internal.slice(0, 5), [], 'no read answered 500 internal');
    t.deepEqual([...answers.keys()].filter((label) => label !== '200' && label !== '503 store_unavailable'), []);
    t.true((answers.get('200') ?? 0) > 0);
    t.false(/"level":50/.test(instance!.process.stderr), `no error-level log line: ${instance!.process.stderr.slice(-1500)}`);
  });
}
