import fs from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { eventHash } from '../../src/core/event-hash.js';
import type { EventHeader } from '../../src/core/event-shape.js';
import { runCli } from '../helpers/server-process.js';
import { openLedger, readLines, verifyJson, writeLines, type TestLedger } from './ledger-fixture.js';

/** The tamper matrix of issue 2 on an export file written by `gatehouse export`. */

interface Exported {
  ledger: TestLedger;
  file: string;
}

async function exported(t: ExecutionContext, build: (ledger: TestLedger) => Promise<void> = (l) => l.append(10)): Promise<Exported> {
  const ledger = await openLedger(t);
  await build(ledger);
  await ledger.close();
  const file = ledger.file(`export-${Math.random().toString(36).slice(2)}.ndjson`);
  const result = await runCli(['export', ...ledger.store.cliArgs, '--out', file]);
  t.is(result.code, 0, result.stderr);
  return { ledger, file };
}

type EventLine = { kind: 'event'; header: EventHeader; hash: string; payload: string | null };

function editEvent(file: string, seq: number, edit: (e: EventLine) => void): void {
  writeLines(file, readLines(file).map((line) => {
    const record = JSON.parse(line) as EventLine;
    if (record.kind !== 'event' || record.header.seq !== seq) return line;
    edit(record);
    return JSON.stringify(record);
  }));
}

function verifyExport(e: Exported, ...extra: string[]) {
  return verifyJson([e.file, ...extra]);
}

function firstBad(result: Awaited<ReturnType<typeof verifyJson>>): number | null | undefined {
  return result.report?.accounts[0]?.first_bad_seq;
}

test('gatehouse export then verify of the file: exit 0, payloads decrypt with the master key', async (t) => {
  const e = await exported(t, async (l) => {
    await l.append(10);
    await l.saveCheckpoint('cp.json');
  });
  const result = await verifyExport(e, '--master-key', e.ledger.file('master.key'), '--keys', await keysFile(e.ledger));
  t.is(result.code, 0, result.stderr);
  t.deepEqual(result.report!.accounts.map((a) => [a.account_id, a.events, a.checkpoints, a.first_bad_seq]), [['acme', 10, 1, null]]);
  t.notRegex(result.stderr, /not pinned/, 'keys given with --keys are pinned');
});

test('an export verified without key options trusts its own header keys and warns they are not pinned', async (t) => {
  const e = await exported(t);
  const result = await verifyExport(e);
  t.is(result.code, 0);
  t.regex(result.stderr, /not pinned/);
});

test('export: one byte of one payload changed: exit 1 at that seq', async (t) => {
  const e = await exported(t);
  editEvent(e.file, 3, (r) => {
    const bytes = Buffer.from(r.payload!, 'base64');
    bytes[30] ^= 0x80;
    r.payload = bytes.toString('base64');
  });
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 3);
});

test('export: one header field changed: exit 1 at that seq', async (t) => {
  const e = await exported(t);
  editEvent(e.file, 7, (r) => {
    r.header.method = 'DELETE';
  });
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 7);
});

test('export: a deleted middle event: exit 1 at the missing seq', async (t) => {
  const e = await exported(t);
  writeLines(e.file, readLines(e.file).filter((l) => !l.includes('"seq":5,')));
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 5);
});

test('export: a deleted tail with its checkpoint lines removed is caught by an earlier saved --checkpoint', async (t) => {
  let saved = '';
  const e = await exported(t, async (l) => {
    await l.append(10);
    saved = (await l.saveCheckpoint('cp-10.json')).file;
  });
  writeLines(e.file, readLines(e.file).filter((l) => {
    const r = JSON.parse(l) as { kind?: string; header?: { seq: number } };
    return r.kind === 'checkpoint' ? false : !(r.kind === 'event' && r.header!.seq > 6);
  }));
  t.is((await verifyExport(e)).code, 0, 'a clean cut with no checkpoint left is a valid shorter log');
  const result = await verifyExport(e, '--checkpoint', saved);
  t.is(result.code, 1);
  t.is(firstBad(result), 7);
});

test('export: the saved checkpoint given as bare note text works the same', async (t) => {
  let note = '';
  const e = await exported(t, async (l) => {
    await l.append(10);
    note = (await l.saveCheckpoint('cp-10.json')).checkpoint.note;
  });
  const noteFile = e.ledger.file('cp-10.note');
  fs.writeFileSync(noteFile, note);
  writeLines(e.file, readLines(e.file).filter((l) => !l.includes('"kind":"checkpoint"') && !l.includes('"seq":10,')));
  const result = await verifyExport(e, '--checkpoint', noteFile);
  t.is(result.code, 1);
  t.is(firstBad(result), 10);
});

test('export: two event lines swapped: exit 1 at the first of them', async (t) => {
  const e = await exported(t);
  const lines = readLines(e.file);
  [lines[3], lines[4]] = [lines[4]!, lines[3]!]; // seq 3 and 4 (line 0 is the header)
  writeLines(e.file, lines);
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 3);
});

test('export: a rollback to an earlier export is caught by a later saved checkpoint', async (t) => {
  const e = await exported(t, (l) => l.append(6));
  const earlier = fs.readFileSync(e.file);
  const reopened = await e.ledger.reopen();
  await reopened.append(4);
  const { file: later } = await reopened.saveCheckpoint('cp-10.json');
  await reopened.close();
  fs.writeFileSync(e.file, earlier);
  const result = await verifyExport(e, '--checkpoint', later);
  t.is(result.code, 1);
  t.is(firstBad(result), 7);
});

test('export: a re-chained forgery is caught by the checkpoint signature', async (t) => {
  const e = await exported(t, async (l) => {
    await l.append(10);
    await l.saveCheckpoint('cp-10.json');
  });
  let prev = '';
  writeLines(e.file, readLines(e.file).map((line) => {
    const r = JSON.parse(line) as EventLine;
    if (r.kind !== 'event' || r.header.seq < 4) {
      if (r.kind === 'event') prev = r.hash;
      return line;
    }
    if (r.header.seq === 4) r.header.idempotency_key = 'forged';
    r.header.prev_hash = prev;
    r.hash = eventHash(r.header);
    prev = r.hash;
    return JSON.stringify(r);
  }));
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 10);
  t.regex(result.report!.accounts[0]!.reason!, /Merkle root at size 10/);
});

test('export: a line cut off in the middle is tampering at the seq after the last good event (exit 1)', async (t) => {
  const e = await exported(t);
  const lines = readLines(e.file);
  lines[6] = lines[6]!.slice(0, 40); // seq 6
  writeLines(e.file, lines);
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 6);
  t.regex(result.report!.accounts[0]!.reason!, /line 7 of the export is not valid JSON/);
});

test('export: a file truncated mid-line is tampering (exit 1), not a crash', async (t) => {
  const e = await exported(t);
  const text = fs.readFileSync(e.file, 'utf8');
  fs.writeFileSync(e.file, text.slice(0, text.indexOf('"seq":9,') + 20));
  const result = await verifyExport(e);
  t.is(result.code, 1);
  t.is(firstBad(result), 9);
  t.notRegex(result.stderr, /\n\s+at /);
});

async function keysFile(ledger: TestLedger): Promise<string> {
  const file = ledger.file('keys.json');
  fs.writeFileSync(file, JSON.stringify({ keys: ledger.context.publicKeys() }));
  return file;
}

test('export: a member named twice in an event line is tampering at that event, whichever value a reader keeps', async (t) => {
  const e = await exported(t);
  const lines = readLines(e.file);
  // seq 4's state is "running": a second, different state member after it. JSON.parse keeps
  // the last, so a reader that keeps the first sees another event than the hash describes.
  lines[4] = lines[4]!.replace('"state":"running"', '"state":"failed","state":"running"');
  t.not(lines[4], readLines(e.file)[4]);
  writeLines(e.file, lines);
  const result = await verifyExport(e);
  t.is(result.code, 1, result.stderr);
  t.is(firstBad(result), 4);
  t.regex(result.report!.accounts[0]!.reason!, /line 5 of the export is not valid JSON \(Duplicate member "state"/);
});

test('export: a byte that is not UTF-8 in an event line is tampering there, not read as U+FFFD', async (t) => {
  const e = await exported(t);
  const bytes = fs.readFileSync(e.file);
  // The first payload character of seq 3 (base64, ASCII) becomes a lone continuation byte.
  const line3 = bytes.indexOf('"seq":3,');
  const payload = bytes.indexOf('"payload":"', line3) + '"payload":"'.length;
  bytes[payload] = 0xff;
  fs.writeFileSync(e.file, bytes);
  const result = await verifyExport(e);
  t.is(result.code, 1, result.stderr);
  t.is(firstBad(result), 3);
  t.regex(result.report!.accounts[0]!.reason!, /not valid UTF-8/);
});

test('export: an event moved out of its account\'s lines is reported against its own account, not its new neighbours', async (t) => {
  const e = await exported(t, async (l) => {
    await l.append(6);
    await l.saveCheckpoint('acme.json');
    await l.append(3, 'globex');
  });
  const lines = readLines(e.file);
  const moved = lines.findIndex((line) => line.includes('"account_id":"acme"') && line.includes('"seq":6,'));
  const [line] = lines.splice(moved, 1);
  const globexEvents = lines.filter((l) => l.includes('"kind":"event"') && l.includes('"account_id":"globex"'));
  lines.splice(lines.indexOf(globexEvents[globexEvents.length - 1]!) + 1, 0, line!);
  writeLines(e.file, lines);
  const result = await verifyExport(e);
  t.is(result.code, 1, result.stderr);
  const verdicts = Object.fromEntries(result.report!.accounts.map((a) => [a.account_id, a]));
  t.is(verdicts.acme!.first_bad_seq, 6);
  t.is(verdicts.globex!.first_bad_seq, null, 'the account whose lines surround the moved one is intact');
  t.is(verdicts.globex!.events, 3);
});

test('export: a broken line before the first event is told to that event\'s account, with no made-up account', async (t) => {
  const e = await exported(t);
  const lines = readLines(e.file);
  lines.splice(1, 0, '');
  writeLines(e.file, lines);
  const result = await verifyExport(e);
  t.is(result.code, 1, result.stderr);
  t.deepEqual(result.report!.accounts.map((a) => [a.account_id, a.first_bad_seq]), [['acme', 1]]);
  t.regex(result.report!.accounts[0]!.reason!, /line 2 of the export is not valid JSON \(the line is empty\)/);
});

test('export: a checkpoint line given twice counts once', async (t) => {
  const e = await exported(t, async (l) => {
    await l.append(4);
    await l.saveCheckpoint('cp.json');
  });
  const lines = readLines(e.file);
  const checkpoint = lines.find((line) => line.includes('"kind":"checkpoint"'))!;
  const before = await verifyExport(e);
  writeLines(e.file, [...lines, checkpoint]);
  const after = await verifyExport(e);
  t.is(after.code, 0, after.stderr);
  t.is(after.report!.accounts[0]!.checkpoints, before.report!.accounts[0]!.checkpoints);
});
