import test from 'ava';
import { createCluster, gatewayKeys, postgresAvailable } from './cluster.js';
import { AckLog, ackCounts, eventCounts, mixedWorker, seqGaps, verifyOnlineAndExported, type Target } from './traffic.js';

const ACCOUNTS = ['acme', 'globex', 'initech', 'umbrella'];
const WORKERS_PER_ACCOUNT = 3;

if (await postgresAvailable()) {
  test('[postgres] two instances under ten seconds of mixed traffic from four accounts store every acknowledged event once and every chain verifies', async (t) => {
    const cluster = await createCluster(t);
    const instances = await cluster.start(2);
    const keys = await gatewayKeys(cluster, ACCOUNTS);
    const targets: Target[] = instances.map((i) => ({ url: i.url, alive: true }));
    const log = new AckLog();
    const end = Date.now() + 10_000;
    await Promise.all(ACCOUNTS.flatMap((account, a) => Array.from({ length: WORKERS_PER_ACCOUNT }, (_, w) =>
      mixedWorker(log, targets, account, keys[a]!, `${account}-w${w}`, () => Date.now() > end))));

    t.deepEqual(log.surprises, [], 'every answer is the one the contract gives (never a 500)');
    t.true(targets.every((x) => x.alive));
    for (const type of ['attempted', 'sent', 'completed', 'replayed'] as const) t.true(log.acks.some((a) => a.type === type), `some ${type}`);
    // Nothing was lost in transit here, so the database holds exactly what was acknowledged.
    const stored = Object.fromEntries([...(await eventCounts(cluster))].filter(([k]) => !k.startsWith('admin ')));
    t.deepEqual(stored, Object.fromEntries(ackCounts(log.acks)));
    t.deepEqual(await seqGaps(cluster), []);
    const report = await verifyOnlineAndExported(t, cluster, instances[1]!.url);
    t.deepEqual(report.accounts.map((a) => a.account_id).filter((a) => ACCOUNTS.includes(a)).sort(), [...ACCOUNTS].sort());
    t.log(`${log.acks.length} acknowledged events over ${ACCOUNTS.length} accounts`);
  });
}
