import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { checkpointBody, signNote } from '../../src/core/note.js';
import { generateSeed, signingKeyFromSeed } from '../../src/core/signing-key.js';
import { SavedCheckpointFileError, readSavedCheckpointFile } from '../../src/verify/saved-checkpoint-file.js';
import { tempDir } from '../helpers/server-process.js';

/**
 * The one reader of `--checkpoint FILE` (verify and prove): what it takes and what it refuses,
 * in the words both verbs print. Each verb's exit code for a refusal is tested with the verb
 * (verify-inputs.test.ts, evidence.test.ts).
 */

const scratch = tempDir('gatehouse-saved-checkpoint-');
test.after.always(scratch.cleanup);

const key = signingKeyFromSeed(generateSeed(), 'gatehouse/ledger1');
const note = signNote(checkpointBody('gatehouse/ledger1/acme', 5, new Uint8Array(32)), key);
const saved = { account_id: 'acme', tree_size: 5, root_hash: '00'.repeat(32), note, cosignatures: 0 };

let n = 0;
function write(content: string | Buffer): string {
  const file = path.join(scratch.dir, `cp-${++n}`);
  fs.writeFileSync(file, content);
  return file;
}

test('a checkpoint as the API returns it, its note text, and that text with a newline more (jq -r, echo) are read alike', (t) => {
  const json = write(JSON.stringify(saved));
  t.deepEqual(readSavedCheckpointFile(json), {
    file: json, ledgerId: 'ledger1', accountId: 'acme',
    checkpoint: { note, tree_size: 5, root_hash: saved.root_hash, account_id: 'acme' },
  });
  for (const text of [note, `${note}\n`]) {
    const file = write(text);
    t.deepEqual(readSavedCheckpointFile(file), { file, ledgerId: 'ledger1', accountId: 'acme', checkpoint: { note } });
  }
});

test('a file that is no saved checkpoint is refused with a SavedCheckpointFileError naming the file and what is wrong', (t) => {
  const { note: _, ...noNote } = saved;
  const json = JSON.stringify(saved);
  const badByte = Buffer.from(json);
  badByte[json.indexOf('"account_id":"') + '"account_id":"'.length] = 0xff;
  const cases: Array<[string, string | Buffer | null, string]> = [
    ['a file that is not there', null, 'cannot read --checkpoint FILE: ENOENT'],
    ['JSON that does not parse', '{"note": ', 'is not strict JSON: '],
    ['a member named twice', json.replace('"tree_size":5', '"tree_size":4,"tree_size":5'), 'is not strict JSON: Duplicate member "tree_size"'],
    ['invalid UTF-8 in a member', badByte, 'is not strict JSON: Invalid JSON: the input is not valid UTF-8'],
    ['no note', JSON.stringify(noNote), 'has no "note" string (expected a checkpoint as GET /v1/audit/checkpoints/latest returns it)'],
    ['a note that is not text', JSON.stringify({ ...saved, note: 5 }), 'has no "note" string'],
    ['tree_size as text', JSON.stringify({ ...saved, tree_size: '5' }), ': tree_size is not a number'],
    ['tree_size null', JSON.stringify({ ...saved, tree_size: null }), ': tree_size is not a number'],
    ['root_hash a number', JSON.stringify({ ...saved, root_hash: 5 }), ': root_hash is not a string'],
    ['account_id a number', JSON.stringify({ ...saved, account_id: 5 }), ': account_id is not a string'],
    ['an empty file', '', 'is not a Gatehouse checkpoint (its first line is not gatehouse/<ledger id>/<account id>)'],
    ['a JSON array', JSON.stringify([saved]), 'is not a Gatehouse checkpoint'],
    ['another log\'s note', note.replace('gatehouse/ledger1/acme', 'example.com/log'), 'is not a Gatehouse checkpoint'],
    ['a garbled signature line', note.replace('\n\u2014 ', '\nsigned by '), 'is not a signed checkpoint note: signature line does not start with'],
    ['no signature block', note.slice(0, note.indexOf('\n\n') + 1), 'is not a signed checkpoint note: no blank line before the signatures'],
    ['its last newline cut off', note.slice(0, -1), 'is not a signed checkpoint note: signature block must end with a newline'],
  ];
  for (const [what, content, message] of cases) {
    const file = content === null ? path.join(scratch.dir, 'none.json') : write(content);
    const error = t.throws(() => readSavedCheckpointFile(file), { instanceOf: SavedCheckpointFileError }, what);
    t.true(error?.message.includes(message.replace('FILE', file)), `${what}: ${error?.message}`);
    t.true(error?.message.includes(`--checkpoint ${file}`), `${what}: names the file`);
  }
});
