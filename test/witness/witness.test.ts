import crypto from 'node:crypto';
import test from 'ava';
import { tempDir } from '../helpers/server-process.js';
import { addCheckpointBody, checkpointNote, consistency, cosignatureVerifies, leaves, logKey, post, startWitness } from './test-log.js';

const ORIGIN = 'gatehouse/0123456789abcdef/acme';
const PREFIX = 'gatehouse/0123456789abcdef/';

async function setup(t: import('ava').ExecutionContext) {
  const { dir, cleanup } = tempDir('gatehouse-witness-');
  t.teardown(cleanup);
  const log = logKey('gatehouse/0123456789abcdef');
  const witness = await startWitness(dir, [`${PREFIX}=${log.vkey}`]);
  t.teardown(() => witness.stop());
  return { dir, log, witness };
}

test('the witness prints a cosignature/v1 verifier key and cosigns a growing log with lines that verify', async (t) => {
  const { log, witness } = await setup(t);
  t.regex(witness.process.stdout, /^witness key: [^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/m);
  t.is(Buffer.from(witness.vkey.split('+').slice(2).join('+'), 'base64')[0], 0x04);
  const all = leaves(40);
  let old = 0;
  for (const size of [5, 12, 16, 40]) {
    const note = checkpointNote(log, ORIGIN, all.slice(0, size));
    const before = BigInt(Math.floor(Date.now() / 1000));
    const r = await post(witness.url, addCheckpointBody(old, consistency(old, all.slice(0, size)), note));
    t.is(r.status, 200, r.text);
    t.regex(r.text, /^\u2014 \S+ [A-Za-z0-9+/=]+\n$/);
    const check = cosignatureVerifies(r.text.slice(0, -1), note, witness.vkey);
    t.true(check.ok, `cosignature at size ${size}`);
    t.true(check.timestamp >= before && check.timestamp <= BigInt(Math.floor(Date.now() / 1000)) + 1n);
    old = size;
  }
  // The monitoring read: the latest cosigned checkpoint, log signature and cosignature included.
  const originHash = crypto.createHash('sha256').update(ORIGIN).digest('hex');
  const latest = await fetch(`${witness.url}/${originHash}/checkpoint`);
  t.is(latest.status, 200);
  const text = await latest.text();
  t.true(text.startsWith(`${ORIGIN}\n40\n`));
  t.true(cosignatureVerifies(text.trimEnd().split('\n').at(-1)!, text, witness.vkey).ok);
});

test('the witness refuses: 409 with its size on a wrong old size or a fork at its size, 422 on a bad proof, 404 unknown origin, 403 untrusted key, 400 malformed', async (t) => {
  const { log, witness } = await setup(t);
  const all = leaves(30);
  t.is((await post(witness.url, addCheckpointBody(0, [], checkpointNote(log, ORIGIN, all.slice(0, 10))))).status, 200);

  const wrongOld = await post(witness.url, addCheckpointBody(8, consistency(8, all.slice(0, 20)), checkpointNote(log, ORIGIN, all.slice(0, 20))));
  t.is(wrongOld.status, 409);
  t.is(wrongOld.text, '10\n');
  t.is(wrongOld.type, 'text/x.tlog.size');
  const fromZero = await post(witness.url, addCheckpointBody(0, [], checkpointNote(log, ORIGIN, all.slice(0, 20))));
  t.is(fromZero.status, 409, 'a client without state learns the size from old 0');
  t.is(fromZero.text, '10\n');

  const proof = consistency(10, all.slice(0, 20));
  proof[0] = Buffer.alloc(32, 7);
  t.is((await post(witness.url, addCheckpointBody(10, proof, checkpointNote(log, ORIGIN, all.slice(0, 20))))).status, 422, 'bad proof');

  // A fork: validly signed, another history from the start.
  const other = leaves(30, 'b');
  const fork = await post(witness.url, addCheckpointBody(10, [], checkpointNote(log, ORIGIN, other.slice(0, 10))));
  t.is(fork.status, 409, 'same size, other root: 409, as tlog-witness says');
  t.is(fork.type, 'text/x.tlog.size');
  t.is(fork.text, '10\n', 'the size it cosigned: a client that proves from it is refused again and knows the log forked');
  t.is((await post(witness.url, addCheckpointBody(10, consistency(10, other.slice(0, 20)), checkpointNote(log, ORIGIN, other.slice(0, 20))))).status, 422, 'larger fork');

  t.is((await post(witness.url, addCheckpointBody(0, [], checkpointNote(log, 'elsewhere.example/log', all.slice(0, 3))))).status, 404, 'unknown origin');
  const stranger = logKey('gatehouse/0123456789abcdef');
  t.is((await post(witness.url, addCheckpointBody(10, consistency(10, all.slice(0, 20)), checkpointNote(stranger, ORIGIN, all.slice(0, 20))))).status, 403, 'no trusted signature');
  const good = checkpointNote(log, ORIGIN, all.slice(0, 20));
  const tampered = good.replace(/ (\S)(\S+)\n$/, (_, c: string, rest: string) => ` ${c === 'A' ? 'B' : 'A'}${rest}\n`);
  t.is((await post(witness.url, addCheckpointBody(10, consistency(10, all.slice(0, 20)), tampered))).status, 403, 'a trusted key whose signature fails');
  t.is((await post(witness.url, addCheckpointBody(25, [], checkpointNote(log, ORIGIN, all.slice(0, 20))))).status, 400, 'old size above the checkpoint');
  t.is((await post(witness.url, 'old 01\n\n' + good)).status, 400, 'leading zero');

  // None of that moved it: the honest next checkpoint still goes from 10.
  t.is((await post(witness.url, addCheckpointBody(10, consistency(10, all.slice(0, 20)), good))).status, 200);
});

test('20 racing requests never leave the witness at a smaller size, and a restarted witness keeps its key and state', async (t) => {
  const { dir, log, witness } = await setup(t);
  const all = leaves(60);
  t.is((await post(witness.url, addCheckpointBody(0, [], checkpointNote(log, ORIGIN, all.slice(0, 20))))).status, 200);
  // Twenty checkpoints, sizes 21..40, each from the size the witness holds: one can win.
  const sizes = Array.from({ length: 20 }, (_, i) => 40 - i);
  const results = await Promise.all(sizes.map((size) =>
    post(witness.url, addCheckpointBody(20, consistency(20, all.slice(0, size)), checkpointNote(log, ORIGIN, all.slice(0, size))))));
  const winners = sizes.filter((_, i) => results[i]!.status === 200);
  t.is(winners.length, 1, 'exactly one request passes the check of the old size');
  t.true(results.every((r) => r.status === 200 || (r.status === 409 && r.text === '20\n') || (r.status === 409 && r.text === `${winners[0]}\n`)));
  const won = winners[0]!;
  // A second wave mixing larger and smaller sizes from the winner's size.
  const wave = await Promise.all([45, 41, 50, won, 43].map((size) =>
    post(witness.url, addCheckpointBody(won, consistency(won, all.slice(0, size)), checkpointNote(log, ORIGIN, all.slice(0, size))))));
  t.true(wave.some((r) => r.status === 200));
  const originHash = crypto.createHash('sha256').update(ORIGIN).digest('hex');
  const sizeNow = Number((await (await fetch(`${witness.url}/${originHash}/checkpoint`)).text()).split('\n')[1]);
  t.true(sizeNow >= won);

  await witness.stop();
  const again = await startWitness(dir, [`${PREFIX}=${log.vkey}`]);
  t.teardown(() => again.stop());
  t.is(again.vkey, witness.vkey, 'same key and name after a restart');
  const probe = await post(again.url, addCheckpointBody(0, [], checkpointNote(log, ORIGIN, all.slice(0, 59))));
  t.is(probe.status, 409);
  t.is(probe.text, `${sizeNow}\n`);
});
