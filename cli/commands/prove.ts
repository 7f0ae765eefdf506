/**
 * `gatehouse prove --account A --seq N [--checkpoint FILE] --out FILE`: an evidence file for one
 * event (src/core/evidence.ts) that anyone can check with `gatehouse verify-evidence`.
 */
import fs from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { givenAs, print, runVerb, storeOptions, UsageError, type StoreArgs } from '../output.js';
import { withExistingLedger } from '../with-context.js';
import { writeNewOutFile } from '../out-file.js';
import type { SavedCheckpoint } from '../../src/ledger/saved-checkpoint.js';
import { noteFromSavedText } from '../../src/core/note.js';
import type { JsonValue } from '../../src/core/json.js';
import { JsonInputError, parseStrictJson } from '../../src/core/strict-json.js';

interface ProveArgs extends StoreArgs {
  account: string;
  seq: number;
  checkpoint?: string;
  out: string;
}

export const proveCommand: CommandModule<object, ProveArgs> = {
  command: 'prove',
  describe: 'write an evidence file: one event, a signed checkpoint and the inclusion proof between them',
  builder: (y) => y.options({
    ...storeOptions,
    account: { type: 'string', demandOption: true },
    seq: { type: 'number', demandOption: true, describe: 'the event to prove' },
    checkpoint: { type: 'string', describe: 'prove against this saved checkpoint (JSON or note text) instead of the newest one covering the event' },
    out: { type: 'string', demandOption: true, describe: 'where to write the evidence file' },
  }) as unknown as Argv<ProveArgs>,
  handler: (args) => runVerb(async () => {
    if (!Number.isSafeInteger(args.seq) || args.seq < 1) throw new UsageError(`--seq must be a whole number from 1${givenAs(args.seq)}`);
    const given = args.checkpoint === undefined ? null : readSavedCheckpoint(args.checkpoint);
    await withExistingLedger(args, async (context) => {
      const { buildEvidence } = await import('../../src/ledger/evidence-file.js');
      const evidence = await buildEvidence(context, args.account, args.seq, given);
      writeNewOutFile(args.out, JSON.stringify(evidence, null, 2) + '\n');
      print(args, `evidence: wrote ${args.out} (account ${args.account}, seq ${args.seq}, checkpoint size ${evidence.checkpoint.tree_size}, ${evidence.checkpoint.cosignatures} witness cosignatures)`,
        { file: args.out, account_id: args.account, seq: args.seq, tree_size: evidence.checkpoint.tree_size, cosignatures: evidence.checkpoint.cosignatures });
    });
  }),
};

/**
 * A saved checkpoint: the JSON the API returns (its note and members), or the note text itself.
 * The JSON is read strictly from its bytes: with two `tree_size` members (or invalid UTF-8) a
 * lenient reader would compare one value with the ledger's while another reader saw the other.
 */
function readSavedCheckpoint(file: string): SavedCheckpoint {
  const bytes = fs.readFileSync(file);
  const text = bytes.toString('utf8');
  if (!text.trimStart().startsWith('{')) return { note: noteFromSavedText(text) };
  let parsed: JsonValue;
  try {
    parsed = parseStrictJson(bytes);
  } catch (error) {
    if (error instanceof JsonInputError) throw new UsageError(`--checkpoint ${file} is not strict JSON: ${error.message}`);
    throw error;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof parsed.note !== 'string') {
    throw new UsageError(`--checkpoint ${file} is neither a checkpoint JSON with a "note" nor a note`);
  }
  const { note, account_id, tree_size, root_hash } = parsed;
  return { note, account_id, tree_size, root_hash };
}
