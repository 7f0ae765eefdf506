import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import test from 'ava';
import { noteVerifierText, signingKeyFromSeed } from '../../src/core/signing-key.js';
import { httpRequest } from '../helpers/app.js';
import { addPrincipal, freePort, runCli, spawnGatehouse, stopAll, tempDir, type SpawnedGatehouse } from '../helpers/server-process.js';
import { cosignatureVerifies, startWitness, type WitnessProcess } from './test-log.js';

// End to end with real processes: `gatehouse serve --witness` and `gatehouse witness`.

const ACCOUNT = 'acme';
test.after.always(() => stopAll());

interface Setup {
  dataDir: string;
  db: string;
  ledgerId: string;
  logVkey: string;
  adminKey: string;
  gatewayKey: string;
}

async function initLedger(t: import('ava').ExecutionContext): Promise<Setup> {
  const { dir, cleanup } = tempDir('gatehouse-witnessed-');
  t.teardown(cleanup);
  const dataDir = path.join(dir, 'data');
  const init = await runCli(['init', '--data-dir', dataDir]);
  if (init.code !== 0) throw new Error(init.stderr);
  const adminKey = init.stdout.match(/admin key: (\S+)/)![1]!;
  const db = path.join(dataDir, 'gatehouse.db');
  const sqlite = new BetterSqlite3(db, { readonly: true });
  const ledgerId = (sqlite.prepare("SELECT value FROM meta WHERE key = 'ledger_id'").get() as { value: string }).value;
  sqlite.close();
  const seed = Buffer.from(fs.readFileSync(path.join(dataDir, 'signing.key'), 'utf8').trim(), 'base64');
  const logVkey = noteVerifierText(`gatehouse/${ledgerId}`, signingKeyFromSeed(seed, `gatehouse/${ledgerId}`).publicKey);
  const gatewayKey = await addPrincipal(dataDir, ACCOUNT, ['gateway']);
  return { dataDir, db, ledgerId, logVkey, adminKey, gatewayKey };
}

async function witnessFor(t: import('ava').ExecutionContext, setup: Setup, port = 0): Promise<WitnessProcess> {
  const { dir, cleanup } = tempDir('gatehouse-witness-');
  t.teardown(cleanup);
  return startWitness(dir, [`gatehouse/${setup.ledgerId}/=${setup.logVkey}`], port);
}

/** `witnessUrl`: how the operator wrote the witness's address (by default its submission prefix). */
function serve(setup: Setup, witness: WitnessProcess, witnessUrl = witness.url): Promise<SpawnedGatehouse> {
  return spawnGatehouse({ args: ['--data-dir', setup.dataDir, '--witness', `${witnessUrl}=${witness.vkey}`], env: { GATEHOUSE_LOG_LEVEL: 'warn' } });
}

async function claims(server: SpawnedGatehouse, setup: Setup, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await httpRequest(server.url, 'POST', '/v1/operations', {
      key: setup.gatewayKey, headers: { 'idempotency-key': `${prefix}-${i}` },
      body: { method: 'POST', route: '/tickets', command: { title: `${prefix} ${i}` } },
    });
    if (r.status !== 201) throw new Error(`claim answered ${r.status}: ${r.text}`);
  }
}

async function checkpointNow(server: SpawnedGatehouse, setup: Setup) {
  const r = await httpRequest(server.url, 'POST', '/v1/audit/checkpoints', { key: setup.adminKey, body: { account_id: ACCOUNT } });
  if (r.status !== 201) throw new Error(`checkpoint answered ${r.status}: ${r.text}`);
  return r.body as { tree_size: number; root_hash: string };
}

/** Polls the newest checkpoint until it carries a cosignature (the submitter runs in the background). */
async function cosigned(server: SpawnedGatehouse, setup: Setup, size: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await httpRequest(server.url, 'GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, { key: setup.adminKey });
    if (r.body?.tree_size === size && r.body.cosignatures >= 1) return r.body as { tree_size: number; note: string; cosignatures: number };
    if (Date.now() > deadline) throw new Error(`no cosignature on size ${size} within ${timeoutMs} ms: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function witnessHolds(witness: WitnessProcess, setup: Setup): Promise<{ size: number; root: string }> {
  const originHash = crypto.createHash('sha256').update(`gatehouse/${setup.ledgerId}/${ACCOUNT}`).digest('hex');
  const [, size, root] = (await (await fetch(`${witness.url}/${originHash}/checkpoint`)).text()).split('\n');
  return { size: Number(size), root: Buffer.from(root!, 'base64').toString('hex') };
}

function copyDb(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const name of fs.readdirSync(path.dirname(from)).filter((f) => f.startsWith(path.basename(from)))) {
    fs.copyFileSync(path.join(path.dirname(from), name), path.join(to, name));
  }
}

test('--witness given the endpoint itself (…/add-checkpoint, as an operator may copy it) reaches the witness as its prefix does', async (t) => {
  const setup = await initLedger(t);
  const witness = await witnessFor(t, setup);
  const server = await serve(setup, witness, `${witness.url}/add-checkpoint/`);
  await claims(server, setup, 'endpoint', 3);
  const checkpoint = await checkpointNow(server, setup);
  const signed = await cosigned(server, setup, checkpoint.tree_size);
  t.true(cosignatureVerifies(signed.note.trimEnd().split('\n').at(-1)!, signed.note, witness.vkey).ok, 'the witness cosigned the checkpoint');
  t.deepEqual(await witnessHolds(witness, setup), { size: checkpoint.tree_size, root: checkpoint.root_hash });
});

test('a restored and rewritten database: the witness refuses it, and verify --witness-key fails where plain verify passes', async (t) => {
  const setup = await initLedger(t);
  const witness = await witnessFor(t, setup);
  let server = await serve(setup, witness);
  await claims(server, setup, 'first', 5);
  const first = await checkpointNow(server, setup);
  const firstCosigned = await cosigned(server, setup, first.tree_size);
  t.true(cosignatureVerifies(firstCosigned.note.trimEnd().split('\n').at(-1)!, firstCosigned.note, witness.vkey).ok, 'the served note carries a cosignature that verifies');
  await server.stop();

  // The operator copies the database aside…
  const aside = path.join(path.dirname(setup.dataDir), 'aside');
  copyDb(setup.db, aside);

  // …writes more events, which the witness sees…
  server = await serve(setup, witness);
  await claims(server, setup, 'second', 5);
  const second = await checkpointNow(server, setup);
  await cosigned(server, setup, second.tree_size);
  const witnessed = await verifyWith(setup, ['--witness-key', witness.vkey, '--min-witnesses', '1']);
  t.is(witnessed.code, 0, `the honest log passes with the witness required: ${witnessed.stdout}${witnessed.stderr}`);
  t.deepEqual(await witnessHolds(witness, setup), { size: second.tree_size, root: second.root_hash });
  await server.stop();

  // …then restores the copy and writes different events.
  for (const name of fs.readdirSync(setup.dataDir).filter((f) => f.startsWith('gatehouse.db'))) fs.rmSync(path.join(setup.dataDir, name));
  copyDb(path.join(aside, 'gatehouse.db'), setup.dataDir);
  server = await serve(setup, witness);
  await claims(server, setup, 'rewritten', 8);
  const rewritten = await checkpointNow(server, setup);
  t.true(rewritten.tree_size > second.tree_size, 'the rewritten history is longer, so only the proof can tell');
  await server.process.waitFor(/witness did not cosign.*(forked|rolled back)|(forked|rolled back).*witness did not cosign/, 60_000, 'stderr');
  const latest = await httpRequest(server.url, 'GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, { key: setup.adminKey });
  t.is(latest.body.tree_size, rewritten.tree_size);
  t.is(latest.body.cosignatures, 0, 'the rewritten checkpoint has no cosignature');
  t.deepEqual(await witnessHolds(witness, setup), { size: second.tree_size, root: second.root_hash }, 'the witness still holds the history it saw');
  await server.stop();

  const plain = await verifyWith(setup, []);
  t.is(plain.code, 0, `plain verify cannot tell: ${plain.stdout}${plain.stderr}`);
  t.regex(plain.stdout, /account acme: intact/);
  const strict = await verifyWith(setup, ['--witness-key', witness.vkey, '--min-witnesses', '1']);
  t.is(strict.code, 1, strict.stdout + strict.stderr);
  t.regex(strict.stdout, /^account acme: TAMPERED at seq \d+: not witnessed: the newest checkpoint \(size \d+\) has 0 valid witness cosignatures, 1 required/m);
});

/**
 * A served ledger with a witness on a port of its own, so that the test can stop the witness and
 * start it again (its state kept); a first checkpoint is already cosigned.
 */
async function servedWithRestartableWitness(t: import('ava').ExecutionContext, setup: Setup) {
  const port = await freePort();
  const { dir, cleanup } = tempDir('gatehouse-witness-');
  t.teardown(cleanup);
  const start = async () => {
    const started = await startWitness(dir, [`gatehouse/${setup.ledgerId}/=${setup.logVkey}`], port);
    t.teardown(() => started.stop());
    return started;
  };
  const witness = await start();
  const server = await serve(setup, witness);
  t.teardown(() => server.stop());
  await claims(server, setup, 'before', 3);
  await cosigned(server, setup, (await checkpointNow(server, setup)).tree_size);
  return { server, witness, restart: start };
}

test('a witness that is down delays only its cosignature: claims go on, and the cosignature arrives once it is back', async (t) => {
  const setup = await initLedger(t);
  const { server, restart, witness: first } = await servedWithRestartableWitness(t, setup);
  let witness = first;

  await witness.stop();
  await claims(server, setup, 'while-down', 6);
  const pending = await checkpointNow(server, setup);
  const meanwhile = await httpRequest(server.url, 'GET', `/v1/audit/checkpoints/latest?account_id=${ACCOUNT}`, { key: setup.adminKey });
  t.is(meanwhile.body.cosignatures, 0);
  // The lag counts from the oldest checkpoint the witness has not cosigned, and keeps growing while it is down.
  const witnessName = witness.vkey.split('+')[0]!;
  const firstLag = await lagUntil(server, setup, witnessName, (s) => s > 0);
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  t.true(await lagUntil(server, setup, witnessName, (s) => s > firstLag) > firstLag, 'the lag grows while the witness is down');

  witness = await restart();
  const arrived = await cosigned(server, setup, pending.tree_size);
  t.is(arrived.cosignatures, 1);
  t.true(cosignatureVerifies(arrived.note.trimEnd().split('\n').at(-1)!, arrived.note, witness.vkey).ok);
  t.is(await lagUntil(server, setup, witnessName, (s) => s === 0), 0, 'caught up: no lag');
});

test('checkpoints signed while a witness was down are each cosigned once it is back, not only the newest', async (t) => {
  const setup = await initLedger(t);
  const { server, restart, witness: first } = await servedWithRestartableWitness(t, setup);
  let witness = first;

  await witness.stop();
  await claims(server, setup, 'down-a', 2);
  const missedA = await checkpointNow(server, setup);
  await claims(server, setup, 'down-b', 2);
  const missedB = await checkpointNow(server, setup);
  witness = await restart();
  await cosigned(server, setup, missedB.tree_size);

  // An auditor may have saved the older one (prove --checkpoint): it must be witnessed too.
  const listed = await httpRequest(server.url, 'GET', `/v1/audit/checkpoints?account_id=${ACCOUNT}&after_size=${missedA.tree_size - 1}&limit=1`, { key: setup.adminKey });
  t.is(listed.status, 200, listed.text);
  t.is(listed.body.items[0].tree_size, missedA.tree_size);
  t.is(listed.body.items[0].cosignatures, 1, 'the checkpoint signed while the witness was down, and superseded before it came back, is cosigned');
  t.true(cosignatureVerifies(listed.body.items[0].note.trimEnd().split('\n').at(-1)!, listed.body.items[0].note, witness.vkey).ok);
});

test('a clean stop has its final checkpoint cosigned: verify --witness-key passes on the database it leaves', async (t) => {
  const setup = await initLedger(t);
  const witness = await witnessFor(t, setup);
  t.teardown(() => witness.stop());
  const server = await serve(setup, witness);
  await claims(server, setup, 'cosigned', 2);
  await cosigned(server, setup, (await checkpointNow(server, setup)).tree_size);
  // Events after the last checkpoint: the stop signs one more, which no running loop sends.
  await claims(server, setup, 'at-stop', 3);
  await server.stop();

  const strict = await verifyWith(setup, ['--witness-key', witness.vkey, '--min-witnesses', '1']);
  t.is(strict.code, 0, strict.stdout + strict.stderr);
  t.regex(strict.stdout, /account acme: intact/);
  const sqlite = new BetterSqlite3(setup.db, { readonly: true });
  const events = (sqlite.prepare('SELECT max(seq) AS n FROM events WHERE account_id = ?').get(ACCOUNT) as { n: number }).n;
  sqlite.close();
  t.is((await witnessHolds(witness, setup)).size, events, 'the witness cosigned the stop\'s checkpoint, which covers every event');
});

/** Scrapes GET /metrics until the witness's cosignature lag satisfies `ok` (the submitter runs in the background); returns it. */
async function lagUntil(server: SpawnedGatehouse, setup: Setup, witness: string, ok: (seconds: number) => boolean, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await httpRequest(server.url, 'GET', '/metrics', { key: setup.adminKey });
    const line = r.text.split('\n').find((l) => l.startsWith(`gatehouse_witness_cosignature_lag_seconds{witness="${witness}"} `));
    const seconds = line === undefined ? NaN : Number(line.split(' ').at(-1));
    if (ok(seconds)) return seconds;
    if (Date.now() > deadline) throw new Error(`witness lag never satisfied the test within ${timeoutMs} ms: ${line ?? 'no sample'}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function verifyWith(setup: Setup, extra: string[]) {
  return runCli(['verify', '--db', setup.db, '--public-key', setup.logVkey, ...extra]);
}
