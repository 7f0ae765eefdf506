import test from 'ava';
import { addPrincipalWith, spawnGatehouse } from '../helpers/server-process.js';
import { createTestStore, storeKinds } from '../helpers/stores.js';

/**
 * docs/http-api.md's "a request whose client closed the connection before its work started is not run", against a
 * process that stops answering for a while (SIGSTOP: a stalled host, a GC or swap storm, a
 * paused container). Clients keep sending claims while it is stopped and give up on each after
 * a second; when it runs again, every one of those connections holds a whole request and its
 * client's FIN. None of those claims may be run: their clients will never learn the outcome, and
 * an operation claimed for nobody would keep its key `in_progress` for a lease and then `unknown`.
 * On SQLite a batch runs to its COMMIT without yielding, so a unit waits one I/O phase after its
 * request was read, where that FIN is seen (src/store/sqlite-store.ts).
 */

for (const kind of await storeKinds()) test(`[${kind}] claims whose clients gave up while the process was stopped are not run when it resumes`, async (t) => {
  const store = await createTestStore(kind);
  t.teardown(() => store.drop());
  const server = await spawnGatehouse({ args: store.cliArgs });
  t.teardown(() => server.stop());
  const apiKey = await addPrincipalWith(store.cliArgs, 'acme', ['gateway']);
  const claim = (key: string, timeoutMs: number) => fetch(`${server.url}/v1/operations`, {
    method: 'POST', signal: AbortSignal.timeout(timeoutMs),
    headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'POST', route: '/tickets', command: { key } }),
  });
  t.is((await claim('before', 10_000)).status, 201);

  const pid = server.process.child.pid!;
  process.kill(pid, 'SIGSTOP');
  let resumed = false;
  t.teardown(() => {
    if (!resumed) process.kill(pid, 'SIGCONT');
  });
  // 25 clients, each sending claim after claim and giving up on each after a second: ~125 requests,
  // each on a connection of its own (fetch drops a connection whose request it abandoned).
  const gaveUp: string[] = [];
  const stopAt = Date.now() + 5_000;
  await Promise.all(Array.from({ length: 25 }, async (_, c) => {
    for (let i = 0; Date.now() < stopAt; i++) {
      const key = `stopped-${c}-${i}`;
      try {
        await claim(key, 1_000);
        t.fail(`${key} was answered while the process was stopped`);
      } catch {
        gaveUp.push(key);
      }
    }
  }));
  process.kill(pid, 'SIGCONT');
  resumed = true;
  t.true(gaveUp.length >= 100, `${gaveUp.length} claims given up`);

  // The process works its backlog; a claim made now is answered after it.
  t.is((await claim('after', 30_000)).status, 201);
  const ran: string[] = [];
  for (const key of gaveUp) {
    const res = await fetch(`${server.url}/v1/operations?idempotency_key=${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (((await res.json()) as { items: unknown[] }).items.length > 0) ran.push(key);
  }
  t.deepEqual(ran, [], 'claims run for clients that had already gone');
});
