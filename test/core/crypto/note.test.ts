import test from 'ava';
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { NoteError, checkpointBody, parseCheckpointBody, signNote, verifyNote } from '../../../src/core/note.js';
import {
  generateSeed,
  keyId,
  noteVerifierKey,
  parseNoteVerifier,
  publicKeyInfo,
  signingKeyFromSeed,
  verifyDetached,
  sign,
} from '../../../src/core/signing-key.js';

// ---- an independent note verifier: node:crypto Ed25519, hand-written parsing ----

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function independentOpen(note: string, verifierKey: string): string {
  // verifier key: name+hash+base64(0x01 ‖ key); the base64 may contain '+'
  const first = verifierKey.indexOf('+');
  const second = verifierKey.indexOf('+', first + 1);
  const name = verifierKey.slice(0, first);
  const hashHex = verifierKey.slice(first + 1, second);
  const keyBytes = Buffer.from(verifierKey.slice(second + 1), 'base64');
  if (keyBytes.length !== 33 || keyBytes[0] !== 1) throw new Error('not ed25519');
  const raw = keyBytes.subarray(1);
  const expectHash = createHash('sha256').update(Buffer.concat([Buffer.from(name + '\n'), Buffer.from([1]), raw])).digest().subarray(0, 4);
  if (expectHash.toString('hex') !== hashHex) throw new Error('verifier key hash mismatch');
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });

  const at = note.lastIndexOf('\n\n');
  const text = note.slice(0, at + 1);
  const lines = note.slice(at + 2).split('\n');
  if (lines.pop() !== '') throw new Error('signature block must end in newline');
  for (const line of lines) {
    if (!line.startsWith('\u2014 ')) throw new Error('bad signature line');
    const [sigName, b64] = line.slice(2).split(' ');
    if (sigName !== name) continue;
    const blob = Buffer.from(b64!, 'base64');
    if (blob.subarray(0, 4).toString('hex') !== hashHex) continue;
    if (nodeVerify(null, Buffer.from(text, 'utf8'), publicKey, blob.subarray(4))) return text;
    throw new Error('bad signature');
  }
  throw new Error('no signature by key');
}

// ---- Go's sumdb/note example (golang.org/x/mod/sumdb/note) ----

const GO_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE =
  GO_TEXT + '\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

function goSeed(): Uint8Array {
  const b64 = GO_SKEY.split('+').slice(4).join('+');
  const bytes = Buffer.from(b64, 'base64');
  return bytes.subarray(1); // 0x01 ‖ seed
}

test('reproduces Go sumdb/note: verifier key and signed note byte for byte', (t) => {
  const key = signingKeyFromSeed(goSeed(), 'PeterNeumann');
  t.is(publicKeyInfo(key).note_verifier, GO_VKEY);
  t.is(signNote(GO_TEXT, key), GO_NOTE);
  const v = parseNoteVerifier(GO_VKEY);
  t.deepEqual(verifyNote(GO_NOTE, [v]), { body: GO_TEXT, verifiedBy: ['PeterNeumann'] });
  t.is(independentOpen(GO_NOTE, GO_VKEY), GO_TEXT);
});

test('publicKeyInfo: key_id, base64 key, verifier key hash computed independently', (t) => {
  const key = signingKeyFromSeed(generateSeed(), 'gatehouse/ledger-1');
  const info = publicKeyInfo(key);
  t.is(info.algorithm, 'ed25519');
  t.is(info.key_id, createHash('sha256').update(key.publicKey).digest('hex').slice(0, 16));
  t.is(info.key_id, keyId(key.publicKey));
  t.is(info.key_id, key.keyId);
  t.is(Buffer.from(info.public_key, 'base64').toString('hex'), Buffer.from(key.publicKey).toString('hex'));
  t.regex(info.public_key, /^[A-Za-z0-9+/]{43}=$/);
  const h = createHash('sha256').update('gatehouse/ledger-1\n').update(Buffer.from([1])).update(key.publicKey).digest();
  t.is(info.note_verifier, `gatehouse/ledger-1+${h.subarray(0, 4).toString('hex')}+${Buffer.concat([Buffer.from([1]), key.publicKey]).toString('base64')}`);
  const parsed = parseNoteVerifier(info.note_verifier);
  t.is(parsed.name, 'gatehouse/ledger-1');
  t.is(parsed.keyHash, h.readUInt32BE(0));
  t.deepEqual(Buffer.from(parsed.publicKey), Buffer.from(key.publicKey));
});

test('parseNoteVerifier refuses mangled keys', (t) => {
  const v = GO_VKEY;
  for (const bad of [
    v.replace('c74f20a3', 'c74f20a4'),
    v.replace('PeterNeumann', 'PeterNeumanN'),
    v.replace('+ARpc', '+Apc'),
    v.replace('+ARpc', '+AhRpc'.slice(0, 5)),
    v + 'A',
    v.slice(0, -1),
    'PeterNeumann+c74f20a3',
    '+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW',
    v.replace('+AR', '+Ah'), // algorithm byte not 0x01
  ]) {
    t.throws(() => parseNoteVerifier(bad), undefined, bad);
  }
});

test('sign / verifyDetached', (t) => {
  const key = signingKeyFromSeed(generateSeed(), 'k');
  const msg = new TextEncoder().encode('hello');
  const sig = sign(key, msg);
  t.is(sig.length, 64);
  t.true(verifyDetached(key.publicKey, msg, sig));
  t.false(verifyDetached(key.publicKey, new TextEncoder().encode('hellp'), sig));
  t.false(verifyDetached(key.publicKey, msg, sig.subarray(1)));
});

test('deterministic keys from the same seed', (t) => {
  const seed = generateSeed();
  const a = signingKeyFromSeed(seed, 'x');
  const b = signingKeyFromSeed(seed, 'x');
  t.deepEqual(Buffer.from(a.publicKey), Buffer.from(b.publicKey));
  t.throws(() => signingKeyFromSeed(new Uint8Array(31), 'x'));
  t.throws(() => signingKeyFromSeed(seed, 'has space'));
  t.throws(() => signingKeyFromSeed(seed, 'has+plus'));
});

// ---- checkpoints ----

const root = createHash('sha256').update('root').digest();

test('checkpoint body is three lines; signed note verifies independently with node:crypto', (t) => {
  const key = signingKeyFromSeed(generateSeed(), 'gatehouse/L1');
  const body = checkpointBody('gatehouse/L1/acct-1', 1234, root);
  t.is(body, `gatehouse/L1/acct-1\n1234\n${root.toString('base64')}\n`);
  const note = signNote(body, key);
  t.true(note.startsWith(body + '\n\u2014 gatehouse/L1 '));
  t.true(note.endsWith('\n'));
  const vkey = publicKeyInfo(key).note_verifier;
  t.is(independentOpen(note, vkey), body);

  // independent parse of the body
  const [origin, size, rootB64, end] = independentOpen(note, vkey).split('\n');
  t.is(origin, 'gatehouse/L1/acct-1');
  t.is(size, '1234');
  t.deepEqual(Buffer.from(rootB64!, 'base64'), root);
  t.is(end, '');

  const parsed = parseCheckpointBody(verifyNote(note, [noteVerifierKey(key)]).body);
  t.deepEqual({ ...parsed, rootHash: Buffer.from(parsed.rootHash) }, { origin: 'gatehouse/L1/acct-1', treeSize: 1234, rootHash: root });
});

test('verifyNote ignores unknown cosignatures, fails on a bad known signature or no known signer', (t) => {
  const log = signingKeyFromSeed(generateSeed(), 'gatehouse/L1');
  const witness = signingKeyFromSeed(generateSeed(), 'witness.example');
  const body = checkpointBody('gatehouse/L1/a', 5, root);
  const note = signNote(body, log);
  const cosigLine = signNote(body, witness).slice(body.length + 1);
  const cosigned = note + cosigLine;

  t.deepEqual(verifyNote(cosigned, [noteVerifierKey(log)]).verifiedBy, ['gatehouse/L1']);
  t.deepEqual(verifyNote(cosigned, [noteVerifierKey(log), noteVerifierKey(witness)]).verifiedBy, ['gatehouse/L1', 'witness.example']);
  t.is(independentOpen(cosigned, publicKeyInfo(log).note_verifier), body);

  const other = signingKeyFromSeed(generateSeed(), 'gatehouse/L1');
  const e1 = t.throws(() => verifyNote(note, [noteVerifierKey(other)]), { instanceOf: NoteError });
  t.is(e1.code, 'unverified_note');

  const tampered = note.replace('\n5\n', '\n6\n');
  const e2 = t.throws(() => verifyNote(tampered, [noteVerifierKey(log)]), { instanceOf: NoteError });
  t.is(e2.code, 'invalid_signature');

  // a bad known signature fails even when another known key signed fine
  const [, witnessName, witnessB64] = /^\u2014 (\S+) (\S+)\n$/.exec(cosigLine)!;
  const witnessBlob = Buffer.from(witnessB64!, 'base64');
  witnessBlob[10]! ^= 0x01; // inside the Ed25519 signature, after the 4-byte key hash
  const badWitness = note + `\u2014 ${witnessName} ${witnessBlob.toString('base64')}\n`;
  const e3 = t.throws(() => verifyNote(badWitness, [noteVerifierKey(log), noteVerifierKey(witness)]), { instanceOf: NoteError });
  t.is(e3.code, 'invalid_signature');

  for (const malformed of [body, note.slice(0, -1), note.replace('\u2014', '-'), note.replace('\n\n', '\n'), note + 'x\n', '\u0001' + note]) {
    const e = t.throws(() => verifyNote(malformed, [noteVerifierKey(log)]), { instanceOf: NoteError });
    t.is(e.code, 'malformed_note');
  }
});

test('parseCheckpointBody is strict', (t) => {
  const good = checkpointBody('o', 0, root);
  t.is(parseCheckpointBody(good).treeSize, 0);
  const b64 = root.toString('base64');
  for (const bad of [
    `o\n1\n${b64}\nextension line\n`,
    `o\n01\n${b64}\n`,
    `o\n-1\n${b64}\n`,
    `o\n1.0\n${b64}\n`,
    `o\n 1\n${b64}\n`,
    `o\n1\n${b64}`,
    `\n1\n${b64}\n`,
    `o\n1\n${b64.replace('=', '')}\n`,
    `o\n1\n${Buffer.alloc(31).toString('base64')}\n`,
    `o\n1\n`,
    `o\n99999999999999999999\n${b64}\n`,
  ]) {
    const e = t.throws(() => parseCheckpointBody(bad), { instanceOf: NoteError }, JSON.stringify(bad));
    t.is(e?.code, 'malformed_checkpoint');
  }
});
