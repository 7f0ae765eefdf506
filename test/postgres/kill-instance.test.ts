import test from 'ava';
import { createCluster, gatewayKeys, postgresAvailable } from './cluster.js';
import { AckLog, missingAcks, mixedWorker, seqGaps, verifyOnlineAndExported, type Target } from './traffic.js';

const ACCOUNTS = ['acme', 'globex'];

if (await postgresAvailable()) {
  test('[postgres] when one of two instances is killed with kill -9 mid-burst, the other keeps serving and nothing acknowledged is lost', async (t) => {
    const cluster = await createCluster(t);
    const [victim, survivor] = await cluster.start(2);
    const keys = await gatewayKeys(cluster, ACCOUNTS);
    const targets: Target[] = [victim!, survivor!].map((i) => ({ url: i.url, alive: true }));
    const log = new AckLog();
    let killedAt = 0;
    let stop = false;
    let settled = false;
    const workers = Promise.all(ACCOUNTS.flatMap((account, a) => Array.from({ length: 4 }, (_, w) =>
      mixedWorker(log, targets, account, keys[a]!, `${account}-w${w}`, () => stop)))).finally(() => (settled = true));
    // Waits for progress, but not past the workers' end (a worker that throws ends them all).
    const acknowledged = async (count: number) => {
      while (log.acks.length < count && !settled) await new Promise((r) => setTimeout(r, 50));
    };

    // Mid-burst: once traffic has flowed through both instances for a while.
    await acknowledged(100);
    const acksBeforeKill = log.acks.length;
    await victim!.kill9();
    killedAt = log.acks.length;
    await acknowledged(killedAt + 100);
    stop = true;
    await workers;

    t.true(acksBeforeKill > 0);
    t.false(targets[0]!.alive, 'the workers noticed the dead instance');
    t.true(targets[1]!.alive, 'the survivor never refused a request');
    t.true(log.acks.length >= killedAt + 100, 'the survivor kept acknowledging after the kill');
    t.deepEqual(log.surprises, [], 'every answer the survivor gave is the one the contract gives (never a 500)');
    t.deepEqual(await missingAcks(cluster, log.acks), [], 'every acknowledged event is stored');
    t.deepEqual(await seqGaps(cluster), []);
    await verifyOnlineAndExported(t, cluster, survivor!.url);
  });
}
