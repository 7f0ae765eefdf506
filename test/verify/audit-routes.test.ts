import crypto from 'node:crypto';
import fs from 'node:fs';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * The audit routes over HTTP on both stores, and the checkpoint note checked by an Ed25519
 * note verification written here from the C2SP signed-note spec with node:crypto only — not
 * by the product's verifier, so a bug shared by signer and verifier cannot hide.
 */

const ACCOUNT = 'acme';

async function withEvents(app: TestApp, n: number): Promise<void> {
  const { ledger, store } = app.context;
  for (let i = 0; i < n; i++) {
    await store.transact((trx) => ledger.append(trx, { account_id: ACCOUNT, type: 'attempted', actor: 'prn_t', payload: { i } }));
  }
}

/** RFC 6962 MTH, recursive, straight from the RFC's definition. */
function merkleRoot(leaves: Buffer[]): Buffer {
  const sha = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
  const mth = (d: Buffer[]): Buffer => {
    if (d.length === 0) return sha();
    if (d.length === 1) return sha(Buffer.from([0]), d[0]!);
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return sha(Buffer.from([1]), mth(d.slice(0, k)), mth(d.slice(k)));
  };
  return mth(leaves);
}

/** C2SP signed-note verification of one Ed25519 signature, from the spec. */
function independentNoteCheck(note: string, verifierKey: string): { origin: string; size: number; root: Buffer } {
  const [name, hashHex, keyB64] = [verifierKey.split('+')[0]!, verifierKey.split('+')[1]!, verifierKey.split('+').slice(2).join('+')];
  const keyBytes = Buffer.from(keyB64, 'base64');
  if (keyBytes[0] !== 0x01 || keyBytes.length !== 33) throw new Error('not an Ed25519 verifier key');
  const publicKey = keyBytes.subarray(1);
  const keyHash = crypto.createHash('sha256').update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([0x01]), publicKey])).digest().subarray(0, 4);
  if (keyHash.toString('hex') !== hashHex) throw new Error('key hash mismatch');
  const split = note.indexOf('\n\n');
  const body = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2).split('\n').filter(Boolean);
  const mine = sigLines.find((l) => l.startsWith(`\u2014 ${name} `));
  if (!mine) throw new Error('no signature line by the log key');
  const blob = Buffer.from(mine.slice(`\u2014 ${name} `.length), 'base64');
  if (!blob.subarray(0, 4).equals(keyHash)) throw new Error('signature key hash mismatch');
  const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
  if (!crypto.verify(null, Buffer.from(body, 'utf8'), spki, blob.subarray(4))) throw new Error('signature does not verify');
  const [origin, size, root] = body.slice(0, -1).split('\n');
  return { origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64') };
}

for (const kind of await storeKinds()) {
  test(`[${kind}] /v1/audit/events pages with next_cursor until null, in seq order`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 25);
    const auditor = await app.keyFor('audit', 'auditor');
    const seqs: number[] = [];
    let cursor: string | null = '0';
    let pages = 0;
    while (cursor !== null) {
      const res = await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}&after_seq=${cursor}&limit=10`, { key: auditor });
      t.is(res.status, 200);
      pages++;
      for (const item of res.body.items) {
        t.deepEqual(Object.keys(item).sort(), ['hash', 'header', 'payload']);
        seqs.push(item.header.seq);
      }
      cursor = res.body.next_cursor === null ? null : String(res.body.next_cursor);
    }
    t.is(pages, 3);
    t.deepEqual(seqs, Array.from({ length: 25 }, (_, i) => i + 1));
    // next_cursor passed back as `cursor`, as every other list takes it, reads the next page too.
    const second = await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}&cursor=10&limit=10`, { key: auditor });
    t.is(second.body.items[0].header.seq, 11);
  });

  test(`[${kind}] a query parameter the audit routes do not take is refused, naming it, rather than read as the first page`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 3);
    const auditor = await app.keyFor('audit', 'auditor');
    for (const path of [`/v1/audit/events?account_id=${ACCOUNT}&afer_seq=2`, `/v1/audit/checkpoints?account_id=${ACCOUNT}&after=1`, `/v1/audit/proofs/inclusion?account_id=${ACCOUNT}&seq=1&tree_size=1&size=1`]) {
      const res = await app.request('GET', path, { key: auditor });
      t.is(res.status, 400, path);
      t.is(res.body.error.code, 'invalid_request');
      t.regex(res.body.error.message, /is not a parameter of this route/);
    }
    const approver = await app.keyFor(ACCOUNT, 'approver');
    const approvals = await app.request('GET', '/v1/approvals?states=pending', { key: approver });
    t.is(approvals.body.error.parameter, 'states');
  });

  test(`[${kind}] a checkpoint made on request verifies with an independent Ed25519 note check and matches the events' Merkle root`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 7);
    const auditor = await app.keyFor('audit', 'auditor');
    const made = await app.request('POST', '/v1/audit/checkpoints', { key: auditor, body: { account_id: ACCOUNT } });
    t.is(made.status, 201);
    t.is(made.body.tree_size, 7);
    const latest = await app.request('GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, { key: auditor });
    t.is(latest.status, 200);
    t.deepEqual(latest.body, made.body);

    const keys = await app.request('GET', '/v1/keys');
    const { origin, size, root } = independentNoteCheck(latest.body.note, keys.body.keys[0].note_verifier);
    t.is(origin, `gatehouse/${app.context.ledgerId}/${ACCOUNT}`);
    t.is(size, 7);
    t.is(root.toString('hex'), latest.body.root_hash);
    const events = await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}&limit=100`, { key: auditor });
    t.deepEqual(merkleRoot(events.body.items.map((e: { hash: string }) => Buffer.from(e.hash, 'hex'))), root);

    const forged = latest.body.note.replace('\n7\n', '\n8\n');
    t.throws(() => independentNoteCheck(forged, keys.body.keys[0].note_verifier), { message: /does not verify/ });
  });

  test(`[${kind}] /v1/audit/export streams the same event lines as gatehouse export`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 12);
    await app.context.ledger.checkpoint(ACCOUNT);
    const auditor = await app.keyFor('audit', 'auditor');
    const res = await app.request('GET', `/v1/audit/export?account_id=${ACCOUNT}`, { key: auditor });
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /ndjson/);
    const file = `${app.store.dataDir}/cli-export.ndjson`;
    const cli = await runCli(['export', ...app.store.cliArgs, '--account', ACCOUNT, '--out', file]);
    t.is(cli.code, 0, cli.stderr);
    const eventLines = (text: string) => text.split('\n').filter((l) => l.includes('"kind":"event"'));
    const httpLines = eventLines(res.text);
    t.is(httpLines.length, 12);
    t.deepEqual(httpLines, eventLines(fs.readFileSync(file, 'utf8')));
    const header = JSON.parse(res.text.slice(0, res.text.indexOf('\n')));
    t.like(header, { format: 'gatehouse-export', version: 1, ledger_id: app.context.ledgerId, account_id: ACCOUNT });

    // what the route streams is what verify reads
    const httpFile = `${app.store.dataDir}/http-export.ndjson`;
    fs.writeFileSync(httpFile, res.text);
    const verified = await runCli(['verify', httpFile]);
    t.is(verified.code, 0, verified.stdout + verified.stderr);
  });

  test(`[${kind}] a gateway key gets 403 on every audit route; no key gets 401`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 1);
    const gateway = await app.keyFor(ACCOUNT, 'gateway');
    for (const [method, path, body] of [
      ['GET', `/v1/audit/events?account_id=${ACCOUNT}`, undefined],
      ['GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, undefined],
      ['POST', '/v1/audit/checkpoints', { account_id: ACCOUNT }],
      ['GET', `/v1/audit/export?account_id=${ACCOUNT}`, undefined],
    ] as const) {
      const res = await app.request(method, path, { key: gateway, body });
      t.is(res.status, 403, `${method} ${path}`);
      t.is(res.body.error.code, 'forbidden');
      t.is((await app.request(method, path, { body })).status, 401);
    }
    t.is((await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}`, { key: app.adminKey })).status, 200);
  });
}
