import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { leafOf, rfcVerifyConsistency, rfcVerifyInclusion } from './rfc9162-verifier.js';
import { signedRoot } from './signed-root.js';

const ACCOUNT = 'acme';
const N = 40;

/** Appends events in batches (one transaction each); returns nothing, the log is read back over HTTP. */
async function appendEvents(app: TestApp, n: number, batch = 1): Promise<void> {
  const { ledger, store } = app.context;
  for (let done = 0; done < n; done += batch) {
    await store.transact(async (trx) => {
      for (let i = done; i < Math.min(n, done + batch); i++) {
        await ledger.append(trx, { account_id: ACCOUNT, type: 'attempted', actor: 'prn_t', payload: { i } });
      }
    });
  }
}

async function eventHashes(app: TestApp, key: string): Promise<string[]> {
  const hashes: string[] = [];
  for (let after = 0; ;) {
    const page = await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}&after_seq=${after}&limit=1000`, { key });
    hashes.push(...page.body.items.map((e: { hash: string }) => e.hash));
    if (page.body.next_cursor === null) return hashes;
    after = Number(page.body.next_cursor);
  }
}

const b = (hex: string) => Buffer.from(hex, 'hex');

for (const kind of await storeKinds()) {
  test(`[${kind}] every inclusion and consistency proof of a 40-event account verifies against the roots of signed checkpoints`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('audit', 'auditor');
    const keys = await app.request('GET', '/v1/keys');
    const verifierKey: string = keys.body.keys[0].note_verifier;
    // A signed checkpoint at every size: each proof is checked against a root the log signed.
    const roots: Buffer[] = [];
    for (let size = 1; size <= N; size++) {
      await appendEvents(app, 1);
      const cp = await app.request('POST', '/v1/audit/checkpoints', { key, body: { account_id: ACCOUNT } });
      t.is(cp.status, 201);
      const signed = signedRoot(cp.body.note, verifierKey);
      t.is(signed.size, size);
      roots[size] = signed.root;
    }
    const hashes = await eventHashes(app, key);
    t.is(hashes.length, N);

    let inclusions = 0;
    for (let size = 1; size <= N; size++) {
      for (let seq = 1; seq <= size; seq++) {
        const r = await app.request('GET', `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=${seq}&tree_size=${size}`, { key });
        t.is(r.status, 200);
        t.deepEqual(Object.keys(r.body).sort(), ['account_id', 'hashes', 'leaf_index', 'seq', 'tree_size']);
        t.like(r.body, { account_id: ACCOUNT, seq, tree_size: size, leaf_index: seq - 1 });
        if (!rfcVerifyInclusion(seq - 1, size, leafOf(hashes[seq - 1]!), r.body.hashes.map(b), roots[size]!)) t.fail(`inclusion of ${seq} in ${size}`);
        else inclusions++;
      }
    }
    t.is(inclusions, (N * (N + 1)) / 2);

    let consistencies = 0;
    for (let to = 0; to <= N; to++) {
      for (let from = 0; from <= to; from++) {
        const r = await app.request('GET', `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&from=${from}&to=${to}`, { key });
        t.is(r.status, 200);
        t.deepEqual(r.body.account_id, ACCOUNT);
        t.is(r.body.from, from);
        t.is(r.body.to, to);
        if (from === 0 || from === to) {
          t.deepEqual(r.body.hashes, [], `empty proof for ${from}..${to}`);
          consistencies++;
        } else if (!rfcVerifyConsistency(from, to, roots[from]!, roots[to]!, r.body.hashes.map(b))) {
          t.fail(`consistency ${from}..${to}`);
        } else {
          consistencies++;
        }
      }
    }
    t.is(consistencies, ((N + 1) * (N + 2)) / 2);
  });

  test(`[${kind}] sizes beyond the log, seq beyond tree_size and missing parameters answer 400 invalid_request`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('audit', 'auditor');
    await appendEvents(app, 5, 5);
    const bad = [
      `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=1&tree_size=6`,
      `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=4&tree_size=3`,
      `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=0&tree_size=3`,
      `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=1&tree_size=0`,
      `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=1`,
      `/v1/audit/proofs/inclusion?account_id=other&seq=1&tree_size=1`,
      `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&from=2&to=6`,
      `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&from=4&to=3`,
      `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&from=-1&to=3`,
      `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&to=3`,
    ];
    for (const path of bad) {
      const r = await app.request('GET', path, { key });
      t.is(r.status, 400, path);
      t.is(r.body.error.code, 'invalid_request', path);
    }
    const ok = await app.request('GET', `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=5&tree_size=5`, { key });
    t.is(ok.status, 200);
    const gateway = await app.keyFor(ACCOUNT, 'gateway');
    for (const path of ['/v1/audit/proofs/inclusion?account_id=acme&seq=1&tree_size=1', '/v1/audit/proofs/consistency?account_id=acme&from=0&to=1', '/v1/audit/checkpoints?account_id=acme']) {
      const r = await app.request('GET', path, { key: gateway });
      t.is(r.status, 403, path);
      t.is((await app.request('GET', path)).status, 401, path);
    }
  });

  test(`[${kind}] a 1,300-event account: proofs that use stored subtrees of 256+ events agree with the RFC verifier`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('audit', 'auditor');
    const keys = await app.request('GET', '/v1/keys');
    const verifierKey: string = keys.body.keys[0].note_verifier;
    const roots = new Map<number, Buffer>();
    for (const size of [300, 512, 1000, 1300]) {
      await appendEvents(app, size - (roots.size === 0 ? 0 : Math.max(...roots.keys())), 100);
      const cp = await app.request('POST', '/v1/audit/checkpoints', { key, body: { account_id: ACCOUNT } });
      roots.set(size, signedRoot(cp.body.note, verifierKey).root);
    }
    const stored = await app.context.store.db.selectFrom('merkle_nodes').select(['level', 'idx']).where('account_id', '=', ACCOUNT).execute();
    t.is(stored.length, 5 + 2 + 1, 'five 256-leaf subtrees, two of 512, one of 1024');
    const hashes = await eventHashes(app, key);
    for (const size of roots.keys()) {
      for (const seq of [1, 2, 255, 256, 257, 300, 511, 513, 999, 1000, 1024, 1025, 1300].filter((s) => s <= size)) {
        const r = await app.request('GET', `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=${seq}&tree_size=${size}`, { key });
        t.true(rfcVerifyInclusion(seq - 1, size, leafOf(hashes[seq - 1]!), r.body.hashes.map(b), roots.get(size)!), `inclusion ${seq} in ${size}`);
      }
      for (const from of roots.keys()) {
        if (from >= size) continue;
        const r = await app.request('GET', `/v1/audit/proofs/consistency?account_id=${ACCOUNT}&from=${from}&to=${size}`, { key });
        t.true(rfcVerifyConsistency(from, size, roots.get(from)!, roots.get(size)!, r.body.hashes.map(b)), `consistency ${from}..${size}`);
      }
    }
  });

  test(`[${kind}] GET /v1/audit/checkpoints lists signed checkpoints after a size, page by page`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('audit', 'auditor');
    for (let i = 0; i < 5; i++) {
      await appendEvents(app, 2, 2);
      await app.request('POST', '/v1/audit/checkpoints', { key, body: { account_id: ACCOUNT } });
    }
    const first = await app.request('GET', `/v1/audit/checkpoints?account_id=${ACCOUNT}&limit=2`, { key });
    t.is(first.status, 200);
    t.deepEqual(first.body.items.map((c: { tree_size: number }) => c.tree_size), [2, 4]);
    t.is(first.body.items[0].cosignatures, 0);
    t.is(first.body.next_cursor, '4');
    const second = await app.request('GET', `/v1/audit/checkpoints?account_id=${ACCOUNT}&limit=2&cursor=${first.body.next_cursor}`, { key });
    t.deepEqual(second.body.items.map((c: { tree_size: number }) => c.tree_size), [6, 8]);
    const rest = await app.request('GET', `/v1/audit/checkpoints?account_id=${ACCOUNT}&after_size=8`, { key });
    t.deepEqual(rest.body.items.map((c: { tree_size: number }) => c.tree_size), [10]);
    t.is(rest.body.next_cursor, null);
  });
}
