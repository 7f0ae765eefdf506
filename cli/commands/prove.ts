/**
 * `gatehouse prove --account A --seq N [--checkpoint FILE] --out FILE`: an evidence file for one
 * event (src/core/evidence.ts) that anyone can check with `gatehouse verify-evidence`.
 */
import type { Argv, CommandModule } from 'yargs';
import { givenAs, print, runVerb, storeOptions, UsageError, type StoreArgs } from '../output.js';
import { withExistingLedger } from '../with-context.js';
import { writeNewOutFile } from '../out-file.js';
import { type SavedCheckpointFile, SavedCheckpointFileError, readSavedCheckpointFile } from '../../src/verify/saved-checkpoint-file.js';

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
    const given = args.checkpoint === undefined ? null : readGivenCheckpoint(args.checkpoint);
    await withExistingLedger(args, async (context) => {
      const { buildEvidence } = await import('../../src/ledger/evidence-file.js');
      const evidence = await buildEvidence(context, args.account, args.seq, given?.checkpoint ?? null);
      writeNewOutFile(args.out, JSON.stringify(evidence, null, 2) + '\n');
      print(args, `evidence: wrote ${args.out} (account ${args.account}, seq ${args.seq}, checkpoint size ${evidence.checkpoint.tree_size}, ${evidence.checkpoint.cosignatures} witness cosignatures)`,
        { file: args.out, account_id: args.account, seq: args.seq, tree_size: evidence.checkpoint.tree_size, cosignatures: evidence.checkpoint.cosignatures });
    });
  }),
};

/** To prove, a file that is no saved checkpoint is a bad --checkpoint value: a usage error (exit 2). */
function readGivenCheckpoint(file: string): SavedCheckpointFile {
  try {
    return readSavedCheckpointFile(file);
  } catch (error) {
    throw error instanceof SavedCheckpointFileError ? new UsageError(error.message) : error;
  }
}
