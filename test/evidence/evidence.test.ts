import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { cosign, cosignerKey } from '../../src/core/cosignature.js';
import { generateSeed, signingKeyFromSeed } from '../../src/core/signing-key.js';
import { runCli } from '../helpers/server-process.js';
import { tempDir } from '../helpers/server-process.js';
import { ACCOUNT, openLedger } from '../verify/ledger-fixture.js';

/** A ledger of 30 events, a checkpoint at 30 cosigned by one witness, and an evidence file for event 17. */
async function withEvidence(t: import('ava').ExecutionContext) {
  const ledger = await openLedger(t);
  await ledger.append(30);
  const checkpoint = await ledger.context.ledger.checkpoint(ACCOUNT);
  const witnessKey = signingKeyFromSeed(generateSeed(), 'witness.example/w1');
  const witness = cosignerKey('witness.example/w1', witnessKey.publicKey);
  const body = checkpoint.note.slice(0, checkpoint.note.indexOf('\n\n') + 1);
  await ledger.context.store.transact((trx) => trx.insertInto('checkpoint_cosignatures').values({
    account_id: ACCOUNT, tree_size: 30, witness: witness.text, line: cosign(body, witness.name, witnessKey, Math.floor(Date.now() / 1000)), created_at: new Date().toISOString(),
  }).execute());
  await ledger.append(5); // the newest checkpoint covering 17 is still the one at 30
  const file = ledger.file('evidence.json');
  const prove = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '17', '--out', file]);
  t.is(prove.code, 0, prove.stderr);
  const keysFile = ledger.file('keys.json');
  fs.writeFileSync(keysFile, JSON.stringify({ keys: ledger.context.publicKeys() }));
  // verify-evidence runs where there is no data dir and no database.
  const elsewhere = tempDir('gatehouse-elsewhere-');
  t.teardown(elsewhere.cleanup);
  const check = (f: string, extra: string[] = []) => runCli(['verify-evidence', f, ...extra], { cwd: elsewhere.dir });
  return { ledger, file, keysFile, witness, check, dir: elsewhere.dir };
}

test('an evidence file verifies offline, pinned or not, with the witness quorum', async (t) => {
  const { file, keysFile, witness, check } = await withEvidence(t);
  const evidence = JSON.parse(fs.readFileSync(file, 'utf8'));
  t.is(evidence.format, 'gatehouse-evidence');
  t.is(evidence.version, 1);
  t.deepEqual(Object.keys(evidence).sort(), ['checkpoint', 'event', 'inclusion', 'keys', 'ledger_id', 'version', 'format'].sort());
  t.is(evidence.event.header.seq, 17);
  t.is(evidence.checkpoint.tree_size, 30);
  t.is(evidence.checkpoint.cosignatures, 1);
  t.like(evidence.inclusion, { account_id: ACCOUNT, seq: 17, tree_size: 30, leaf_index: 16 });

  const pinned = await check(file, ['--keys', keysFile, '--witness-key', witness.text, '--min-witnesses', '1']);
  t.is(pinned.code, 0, pinned.stdout + pinned.stderr);
  t.regex(pinned.stdout, /^evidence: VALID: event 17 of account acme .* size 30 with 1 valid witness cosignature\n$/);
  t.is(pinned.stderr, '');
  const unpinned = await check(file);
  t.is(unpinned.code, 0);
  t.regex(unpinned.stderr, /not pinned/);
  const json = await check(file, ['--keys', keysFile, '--json']);
  t.like(JSON.parse(json.stdout), { ok: true, seq: 17, tree_size: 30 });
  t.is((await check(path.join(file, 'missing'))).code, 2, 'I/O error');
  t.is((await check(file, ['--min-witnesses', '1'])).code, 2, 'a quorum without witness keys is a usage error');
});

test('each kind of tampering makes verify-evidence exit 1 with "evidence: INVALID: reason"', async (t) => {
  const { file, keysFile, witness, check, dir } = await withEvidence(t);
  const original = JSON.parse(fs.readFileSync(file, 'utf8'));
  const flipBase64 = (b64: string, at: number) => {
    const bytes = Buffer.from(b64, 'base64');
    bytes[at]! ^= 0x01;
    return bytes.toString('base64');
  };
  const cases: Array<[string, (e: any) => void, RegExp]> = [
    ['a header byte', (e) => { e.event.header.ts = e.event.header.ts.replace(/.$/, (c: string) => (c === 'Z' ? 'X' : 'Z')); }, /hash does not match its header/],
    ['the event hash', (e) => { e.event.hash = e.event.hash.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a')); }, /hash does not match/],
    ['the payload', (e) => { e.event.payload = flipBase64(e.event.payload, 30); }, /payload does not match payload_hash/],
    ['a proof hash', (e) => { e.inclusion.hashes[1] = e.inclusion.hashes[1].replace(/^./, (c: string) => (c === '0' ? '1' : '0')); }, /inclusion proof does not lead/],
    ['the proof length', (e) => { e.inclusion.hashes.pop(); }, /inclusion proof does not lead/],
    ['the checkpoint note', (e) => { e.checkpoint.note = e.checkpoint.note.replace('\n30\n', '\n31\n'); }, /signature/],
    ['the checkpoint signature', (e) => {
      const lines = e.checkpoint.note.split('\n');
      const i = lines.findIndex((l: string) => l.startsWith('\u2014 gatehouse/'));
      const [dash, name, sig] = lines[i].split(' ');
      lines[i] = [dash, name, flipBase64(sig, 20)].join(' ');
      e.checkpoint.note = lines.join('\n');
    }, /signature/],
    ['the root_hash field', (e) => { e.checkpoint.root_hash = '0'.repeat(64); }, /root_hash differs/],
    ['a witness cosignature', (e) => {
      const lines = e.checkpoint.note.split('\n');
      const i = lines.findIndex((l: string) => l.startsWith('\u2014 witness.example/w1 '));
      const [dash, name, sig] = lines[i].split(' ');
      lines[i] = [dash, name, flipBase64(sig, 40)].join(' ');
      e.checkpoint.note = lines.join('\n');
    }, /0 valid witness cosignatures \(1 invalid\), 1 required/],
  ];
  for (const [what, tamper, reason] of cases) {
    const copy = structuredClone(original);
    tamper(copy);
    const tampered = path.join(dir, 'tampered.json');
    fs.writeFileSync(tampered, JSON.stringify(copy));
    const r = await check(tampered, ['--keys', keysFile, '--witness-key', witness.text]);
    t.is(r.code, 1, `${what}: ${r.stdout}${r.stderr}`);
    t.regex(r.stdout, /^evidence: INVALID: .+\n$/, what);
    t.regex(r.stdout, reason, what);
  }
  // The file's own keys (trusted, with a warning, when no key is pinned): an entry whose
  // public_key is not the key its note_verifier names is refused, whichever one a tool reads.
  const selfContradicting = structuredClone(original);
  selfContradicting.keys[0].public_key = flipBase64(selfContradicting.keys[0].public_key, 5);
  const contradicted = path.join(dir, 'contradicting-keys.json');
  fs.writeFileSync(contradicted, JSON.stringify(selfContradicting));
  const own = await check(contradicted, []);
  t.is(own.code, 1, own.stdout + own.stderr);
  t.is(own.stdout, 'evidence: INVALID: keys: key 0: its public_key is not the key its note_verifier names\n');
  // Signed by another key than the one pinned.
  const otherKeys = path.join(dir, 'other-keys.json');
  const other = signingKeyFromSeed(generateSeed(), `gatehouse/${original.ledger_id}`);
  const { publicKeyInfo } = await import('../../src/core/signing-key.js');
  fs.writeFileSync(otherKeys, JSON.stringify({ keys: [publicKeyInfo(other)] }));
  const r = await check(file, ['--keys', otherKeys]);
  t.is(r.code, 1);
  t.regex(r.stdout, /^evidence: INVALID: the checkpoint is not signed by a trusted log key\n$/);
});

test('prove refuses an event beyond the log and a checkpoint this ledger did not sign (exit 2)', async (t) => {
  const { ledger } = await withEvidence(t);
  const beyond = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '99', '--out', ledger.file('x.json')]);
  t.is(beyond.code, 2);
  t.regex(beyond.stderr, /has 35 events/);
  const forged = ledger.file('forged.json');
  // Well formed (a key hash and a signature's worth of bytes), so it is judged against the ledger, not refused as no note at all.
  fs.writeFileSync(forged, JSON.stringify({ note: `gatehouse/x/${ACCOUNT}\n30\n${Buffer.alloc(32).toString('base64')}\n\n\u2014 gatehouse/x ${Buffer.alloc(68).toString('base64')}\n` }));
  const r = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '3', '--checkpoint', forged, '--out', ledger.file('y.json')]);
  t.is(r.code, 2);
  t.regex(r.stderr, /not one this ledger signed/);
  // A fresh checkpoint is signed when none covers the event yet.
  const fresh = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '33', '--out', ledger.file('z.json')]);
  t.is(fresh.code, 0, fresh.stderr);
  t.is(JSON.parse(fs.readFileSync(ledger.file('z.json'), 'utf8')).checkpoint.tree_size, 35);
});

test('prove --checkpoint takes the saved checkpoint only when it is exactly one this ledger signed, and names what differs (exit 2)', async (t) => {
  const { ledger, file } = await withEvidence(t);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')).checkpoint; // as the API returns it: with its cosignature
  const prove = async (checkpoint: unknown, name: string) => {
    const given = ledger.file(`${name}.json`);
    fs.writeFileSync(given, typeof checkpoint === 'string' ? checkpoint : JSON.stringify(checkpoint));
    return runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '5', '--checkpoint', given, '--out', ledger.file(`${name}-evidence.json`)]);
  };
  const flipLast = (line: string) => line.replace(/.(=*)$/, (c, pad: string) => (c[0] === 'A' ? 'B' : 'A') + pad);
  const lines = saved.note.split('\n') as string[];
  const logLine = lines.findIndex((l) => l.startsWith('\u2014 gatehouse/'));
  const withLine = (i: number, text: string) => lines.map((l, j) => (j === i ? text : l)).join('\n');

  const exact = await prove(saved, 'exact');
  t.is(exact.code, 0, exact.stderr);
  const older = await prove(lines.filter((l) => !l.startsWith('\u2014 witness.example/')).join('\n'), 'older');
  t.is(older.code, 0, `a copy saved before the witness cosigned (note text only): ${older.stderr}`);
  const echoed = await prove(`${saved.note}\n`, 'echoed');
  t.is(echoed.code, 0, `the note text saved with jq -r or echo, one newline more at its end: ${echoed.stderr}`);

  const cases: Array<[string, unknown, RegExp]> = [
    ['a log signature altered', { ...saved, note: withLine(logLine, flipLast(lines[logLine]!)) }, /its log signature differs from the one stored at size 30/],
    ['root_hash altered', { ...saved, root_hash: '0'.repeat(64) }, /its root_hash differs from the one stored at size 30/],
    ['tree_size altered', { ...saved, tree_size: 29 }, /its tree_size 29 differs from its note's size 30/],
    ['account_id altered', { ...saved, account_id: 'other' }, /its account_id "other" differs from its note's origin/],
    ['the root line of the note altered', { ...saved, note: withLine(2, Buffer.alloc(32, 7).toString('base64')) }, /its note's signed text \(the root\) differs/],
    ['a signature line added', { ...saved, note: saved.note + '\u2014 someone AAAAAAAA\n' }, /carries a signature line this ledger does not hold/],
    ['a size with no stored checkpoint', { note: withLine(1, '31') }, /this ledger has no checkpoint of the account at size 31/],
    ['another account', { note: withLine(0, lines[0]!.replace(/\/acme$/, '/beta')) }, /its origin is "gatehouse\/[0-9a-f]+\/beta"/],
  ];
  for (const [what, checkpoint, reason] of cases) {
    const r = await prove(checkpoint, what.replace(/\W+/g, '-'));
    t.is(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
    t.regex(r.stderr, /^gatehouse: the given checkpoint is not one this ledger signed for account acme: /, what);
    t.regex(r.stderr, reason, what);
    t.false(fs.existsSync(ledger.file(`${what.replace(/\W+/g, '-')}-evidence.json`)), `${what}: no evidence file`);
  }
});

test('verify-evidence and verify judge --min-witnesses alike: 0, or any value without --witness-key, is a usage error (exit 2)', async (t) => {
  const { ledger, file, keysFile, witness, check } = await withEvidence(t);
  const cases: Array<[string, string[], string]> = [
    ['0 with a witness key', ['--witness-key', witness.text, '--min-witnesses', '0'], '--min-witnesses must be a whole number from 1 to 1 (the --witness-key values given), not 0'],
    ['more than the witness keys', ['--witness-key', witness.text, '--min-witnesses', '2'], '--min-witnesses must be a whole number from 1 to 1 (the --witness-key values given), not 2'],
    ['0 without a witness key', ['--min-witnesses', '0'], '--min-witnesses needs the witnesses\' keys: give --witness-key KEY for each'],
  ];
  for (const [what, options, message] of cases) {
    const evidence = await check(file, ['--keys', keysFile, ...options]);
    t.is(evidence.code, 2, `verify-evidence, ${what}: ${evidence.stdout}${evidence.stderr}`);
    t.is(evidence.stderr, `gatehouse verify-evidence: ${message}\n`, `verify-evidence, ${what}`);
    t.is(evidence.stdout, '', `verify-evidence, ${what}`);
    const verify = await runCli(['verify', ...ledger.store.cliArgs, '--keys', keysFile, ...options]);
    t.is(verify.code, 2, `verify, ${what}: ${verify.stdout}${verify.stderr}`);
    t.is(verify.stderr, `gatehouse verify: ${message}\n`, `verify, ${what}`);
  }
});

test('a file that is not an evidence file, or of a version this verifier does not read, is unreadable input (exit 2), not INVALID', async (t) => {
  const { file, keysFile, check, dir } = await withEvidence(t);
  const original = JSON.parse(fs.readFileSync(file, 'utf8'));
  const cases: Array<[string, unknown, string]> = [
    ['an export header', { format: 'gatehouse-export', version: 1, ledger_id: original.ledger_id }, 'not a Gatehouse evidence file (its "format" is not "gatehouse-evidence")'],
    ['no format at all', { ...original, format: undefined }, 'not a Gatehouse evidence file (its "format" is not "gatehouse-evidence")'],
    ['a JSON array', [original], 'not a Gatehouse evidence file (its "format" is not "gatehouse-evidence")'],
    ['version 2', { ...original, version: 2 }, 'a Gatehouse evidence file of version 2; this verifier reads version 1'],
    ['version "1"', { ...original, version: '1' }, 'a Gatehouse evidence file of version "1"; this verifier reads version 1'],
  ];
  for (const [what, content, message] of cases) {
    const other = path.join(dir, 'other.json');
    fs.writeFileSync(other, JSON.stringify(content));
    const r = await check(other, ['--keys', keysFile]);
    t.is(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
    t.is(r.stderr, `gatehouse verify-evidence: ${other}: ${message}\n`, what);
    t.is(r.stdout, '', what);
  }
});

test('verify-evidence reads the file strictly: an evidence file with a repeated member, invalid UTF-8 or broken syntax is INVALID (exit 1); bytes that are no evidence file exit 2', async (t) => {
  const { file, keysFile, check, dir } = await withEvidence(t);
  const text = JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')));
  t.true(text.includes('"type":"attempted"'));
  const write = (name: string, content: string | Buffer) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, content);
    return f;
  };
  // Two readers would see two events: JSON.parse keeps the last "type", another parser the first.
  const twoTypes = write('two-types.json', text.replace('"type":"attempted"', '"type":"completed","type":"attempted"'));
  const r = await check(twoTypes, ['--keys', keysFile]);
  t.is(r.code, 1, r.stdout + r.stderr);
  t.regex(r.stdout, /^evidence: INVALID: the file is not strict JSON: Duplicate member "type" at offset \d+ \(at \/event\/header\/type\): .*; gatehouse prove never writes that: the file was altered\n$/);
  const json = await check(twoTypes, ['--keys', keysFile, '--json']);
  t.is(json.code, 1);
  t.like(JSON.parse(json.stdout), { ok: false });
  t.regex(JSON.parse(json.stdout).reason, /Duplicate member "type"/);
  // A byte that is not UTF-8 in a member the checks never compare (created_at): still not what prove wrote.
  const at = Buffer.from(text).indexOf('"created_at":"') + '"created_at":"'.length;
  const badUtf8 = write('bad-utf8.json', Buffer.concat([Buffer.from(text).subarray(0, at), Buffer.from([0xff]), Buffer.from(text).subarray(at + 1)]));
  const u = await check(badUtf8, ['--keys', keysFile]);
  t.is(u.code, 1, u.stdout + u.stderr);
  t.regex(u.stdout, /^evidence: INVALID: the file is not strict JSON: .*not valid UTF-8/);
  // No JSON any more, but it names itself evidence as prove wrote it: cut short, or one byte of
  // its syntax changed, it is an altered evidence file (INVALID), as a broken export line is TAMPERED.
  const colon = text.indexOf(':', text.indexOf('"event"'));
  for (const [what, altered] of [['cut short', text.slice(0, 100)], ['a colon turned into a semicolon', `${text.slice(0, colon)};${text.slice(colon + 1)}`]] as const) {
    const a = await check(write('altered.json', altered), ['--keys', keysFile]);
    t.is(a.code, 1, `${what}: ${a.stdout}${a.stderr}`);
    t.regex(a.stdout, /^evidence: INVALID: the file is not JSON: Invalid JSON at offset \d+ .*; it names itself a gatehouse-evidence file: the file was altered\n$/, what);
  }

  // Not an evidence file at all, or no JSON that names itself one: the wrong input, whatever its repeated members.
  const cases: Array<[string, string, RegExp]> = [
    ['no JSON', 'format: gatehouse-evidence', /^gatehouse verify-evidence: .*x\.json: not strict JSON: Invalid JSON at offset 0 .*\n$/],
    ['an export header cut short', '{"format":"gatehouse-export","version":1,"led', /^gatehouse verify-evidence: .*x\.json: not strict JSON: Invalid JSON at offset 41 .*unterminated string\n$/],
    ['another JSON with a repeated member', '{"a":1,"a":2}', /^gatehouse verify-evidence: .*x\.json: not strict JSON: Duplicate member "a"/],
  ];
  for (const [what, content, message] of cases) {
    const x = await check(write('x.json', content), ['--keys', keysFile]);
    t.is(x.code, 2, `${what}: ${x.stdout}${x.stderr}`);
    t.regex(x.stderr, message, what);
    t.is(x.stdout, '', what);
  }
  // The trusted keys are the user's own input: a repeated member there is a usage error.
  const keys = fs.readFileSync(keysFile, 'utf8');
  const twoKeyLists = write('two-keys.json', keys.replace('{"keys":', '{"keys":[],"keys":'));
  const k = await check(file, ['--keys', twoKeyLists]);
  t.is(k.code, 2, k.stdout + k.stderr);
  // The same reader, and the same words, as verify's --keys (verify-inputs.test.ts).
  t.regex(k.stderr, /^gatehouse verify-evidence: cannot read --keys .*: Duplicate member "keys"/);
});

test('prove reads a saved --checkpoint JSON strictly: a repeated tree_size or invalid UTF-8 is refused (exit 2)', async (t) => {
  const { ledger, file } = await withEvidence(t);
  const saved = JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')).checkpoint);
  const prove = async (content: string | Buffer, name: string) => {
    const given = ledger.file(`${name}.json`);
    fs.writeFileSync(given, content);
    const out = ledger.file(`${name}-evidence.json`);
    const r = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '5', '--checkpoint', given, '--out', out]);
    return { ...r, given, made: fs.existsSync(out) };
  };
  const twoSizes = await prove(saved.replace('"tree_size":30', '"tree_size":29,"tree_size":30'), 'two-sizes');
  t.is(twoSizes.code, 2, twoSizes.stdout + twoSizes.stderr);
  t.is(twoSizes.stderr, `gatehouse: --checkpoint ${twoSizes.given} is not strict JSON: Duplicate member "tree_size" at offset ${saved.indexOf('"tree_size"') + '"tree_size":29,'.length} (at /tree_size): an object may name a member only once\n`);
  t.false(twoSizes.made);
  const at = Buffer.from(saved).indexOf('"created_at":"') + '"created_at":"'.length;
  const badUtf8 = await prove(Buffer.concat([Buffer.from(saved).subarray(0, at), Buffer.from([0xc3, 0x28]), Buffer.from(saved).subarray(at + 2)]), 'bad-utf8');
  t.is(badUtf8.code, 2, badUtf8.stdout + badUtf8.stderr);
  t.regex(badUtf8.stderr, /is not strict JSON: .*not valid UTF-8/);
  t.false(badUtf8.made);
  const exact = await prove(saved, 'exact');
  t.is(exact.code, 0, exact.stderr);
});

test('prove refuses a --checkpoint file that is no saved checkpoint as a usage error (exit 2), in the words verify uses', async (t) => {
  const { ledger, file } = await withEvidence(t);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')).checkpoint;
  const prove = async (content: string | null, name: string) => {
    const given = ledger.file(`${name}.json`);
    if (content !== null) fs.writeFileSync(given, content);
    const out = ledger.file(`${name}-evidence.json`);
    const r = await runCli(['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '5', '--checkpoint', given, '--out', out]);
    return { ...r, given, made: fs.existsSync(out) };
  };
  // The one reader's refusals (test/verify/saved-checkpoint-file.test.ts), each before the ledger is asked.
  const cases: Array<[string, string | null, string]> = [
    ['no such file', null, 'cannot read --checkpoint FILE: ENOENT'],
    ['no note', JSON.stringify({ ...saved, note: undefined }), '--checkpoint FILE has no "note" string (expected a checkpoint as GET /v1/audit/checkpoints/latest returns it)'],
    ['tree_size as text', JSON.stringify({ ...saved, tree_size: String(saved.tree_size) }), '--checkpoint FILE: tree_size is not a number'],
    ['a garbled signature line', saved.note.replace('\n\u2014 ', '\nsigned by '), '--checkpoint FILE is not a signed checkpoint note: signature line does not start with "\u2014 "'],
    ['the note\'s last newline cut off', saved.note.slice(0, -1), '--checkpoint FILE is not a signed checkpoint note: signature block must end with a newline'],
  ];
  for (const [what, content, message] of cases) {
    const r = await prove(content, what.replace(/\W+/g, '-'));
    t.is(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
    t.is(r.stderr, `gatehouse: ${message.replace('FILE', r.given)}\n`, what);
    t.false(r.made, `${what}: no evidence file`);
  }
});
