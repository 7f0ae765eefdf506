import test from 'ava';
import { checkCosignatures, cosign, cosignerKey, parseCosignerVerifier } from '../../../src/core/cosignature.js';
import { checkpointBody, signNote } from '../../../src/core/note.js';
import { generateSeed, signingKeyFromSeed } from '../../../src/core/signing-key.js';

// Published values: a cosignature/v1 verifier key from transparency-dev/formats' tests (its key
// ID is SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[:4]), and the example line of C2SP tlog-cosignature,
// whose timestamp is the one in the spec's example message ("time 1679315147").
const PUBLISHED_VKEY = 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2';
const SPEC_LINE_BLOB = 'jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==';

test('a published cosignature/v1 verifier key parses, and formatting its key gives the same text', (t) => {
  const key = parseCosignerVerifier(PUBLISHED_VKEY);
  t.is(key.name, 'remora.n621.de');
  t.is(key.keyHash, 0xda77ade7);
  t.is(cosignerKey(key.name, key.publicKey).text, PUBLISHED_VKEY);
  t.throws(() => parseCosignerVerifier(PUBLISHED_VKEY.replace('da77ade7', 'da77ade8')), { message: /key id does not match/ });
  // The same key as a plain Ed25519 note key (type 0x01) is not a witness key.
  t.throws(() => parseCosignerVerifier('TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6'), { message: /not a cosignature\/v1 key/ });
});

test('the cosignature line layout: key ID, big-endian u64 timestamp, 64-byte signature (the spec example)', (t) => {
  const blob = Buffer.from(SPEC_LINE_BLOB, 'base64');
  t.is(blob.length, 76);
  t.is(blob.readBigUInt64BE(4), 1679315147n);
  const body = checkpointBody('example.com/log', 5, Buffer.alloc(32, 1));
  const key = signingKeyFromSeed(generateSeed(), 'w1.example');
  const line = cosign(body, 'w1.example', key, 1679315147);
  const ours = Buffer.from(line.split(' ')[2]!, 'base64');
  t.is(ours.length, 76);
  t.is(ours.readBigUInt64BE(4), 1679315147n);
  t.is(ours.readUInt32BE(0), cosignerKey('w1.example', key.publicKey).keyHash);
});

test('checkCosignatures counts each known witness once, ignores unknown lines, and names a bad one', (t) => {
  const log = signingKeyFromSeed(generateSeed(), 'gatehouse/abc');
  const body = checkpointBody('gatehouse/abc/acme', 7, Buffer.alloc(32, 2));
  const note = signNote(body, log);
  const w1 = signingKeyFromSeed(generateSeed(), 'w1.example');
  const w2 = signingKeyFromSeed(generateSeed(), 'w2.example');
  const k1 = cosignerKey('w1.example', w1.publicKey);
  const k2 = cosignerKey('w2.example', w2.publicKey);
  const both = `${note}${cosign(body, 'w1.example', w1, 1700000000)}\n${cosign(body, 'w1.example', w1, 1700000001)}\n${cosign(body, 'w2.example', w2, 1700000000)}\n`;
  t.deepEqual(checkCosignatures(both, [k1, k2]).valid.sort(), [k1.text, k2.text].sort());
  t.deepEqual(checkCosignatures(both, [k1]).valid, [k1.text]);
  const otherBody = checkpointBody('gatehouse/abc/acme', 7, Buffer.alloc(32, 3));
  const forged = `${note}${cosign(otherBody, 'w2.example', w2, 1700000000)}\n`;
  t.deepEqual(checkCosignatures(forged, [k1, k2]), { valid: [], invalid: [k2.text] });
});
