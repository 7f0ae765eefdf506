// The console's chain panel shows the latest checkpoint as the API serves it: with the
// witnesses' cosignatures, which are stored beside the checkpoint and appended to its note.
import crypto from 'node:crypto';
import test from 'ava';
import { cosign } from '../../src/core/cosignature.js';
import { splitNote } from '../../src/core/note.js';
import { signingKeyFromSeed } from '../../src/core/signing-key.js';
import { storeCosignature } from '../../src/ledger/cosignatures.js';
import { rfc3339 } from '../../src/core/time.js';
import { ACCOUNT, seedIncident } from './incident.js';

test('[sqlite] a cosigned checkpoint shows its witness in the chain panel, page and JSON, as GET /v1/audit/checkpoints/latest counts it', async (t) => {
  const { app, auditor } = await seedIncident(t, 'sqlite');
  const made = await app.request('POST', '/v1/audit/checkpoints', { key: app.adminKey, body: { account_id: ACCOUNT } });
  t.is(made.status, 201, made.text);
  const witness = 'witness.example/w1';
  const key = signingKeyFromSeed(crypto.randomBytes(32), witness);
  const line = cosign(splitNote(made.body.note)!.body, witness, key, Math.floor(Date.now() / 1000));
  await app.context.store.transact((trx) => storeCosignature(trx, {
    account_id: ACCOUNT, tree_size: made.body.tree_size, witness: `${witness}+00000000+key`, line, created_at: rfc3339(Date.now()),
  }));

  const api = await app.request('GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, { key: auditor });
  t.is(api.body.cosignatures, 1);
  const login = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: auditor }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const json = await (await fetch(`${app.url}/ui/review/chain?account_id=${ACCOUNT}&format=json`, { headers: { cookie } })).json() as {
    latest_checkpoint: { tree_size: number; note: string; cosignatures: number; signatures: Array<{ name: string; by: string }> };
  };
  t.is(json.latest_checkpoint.tree_size, made.body.tree_size);
  t.is(json.latest_checkpoint.note, api.body.note, 'the note as the API serves it, the cosignature line included');
  t.is(json.latest_checkpoint.cosignatures, 1);
  t.deepEqual(json.latest_checkpoint.signatures.filter((s) => s.by === 'witness'), [{ name: witness, by: 'witness' }]);
  const page = await (await fetch(`${app.url}/ui/review/chain?account_id=${ACCOUNT}`, { headers: { cookie, accept: 'text/html' } })).text();
  t.regex(page, /<dd id="cosignatures"><code>witness\.example\/w1<\/code>/);
});
