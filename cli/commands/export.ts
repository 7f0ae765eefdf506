import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { Argv, CommandModule } from 'yargs';
import { validateAccountId } from '../../src/principals/accounts.js';
import { accountInLedger, exportLines } from '../../src/ledger/export.js';
import { rfc3339 } from '../../src/core/time.js';
import { EXIT_STDOUT_CLOSED, print, runVerb, storeOptions, UsageError, type StoreArgs } from '../output.js';
import { withExistingLedger } from '../with-context.js';
import { openNewOutFile } from '../out-file.js';

interface ExportArgs extends StoreArgs {
  account?: string;
  out: string;
}

export const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export',
  describe: 'write the ledger (one account or all) as NDJSON for offline verification',
  builder: (y) => y.options({
    ...storeOptions,
    account: { type: 'string' },
    // nargs: 1 takes the next word as the value even when it is "-" (yargs otherwise reads a
    // lone "-" as a stray positional and refuses it).
    out: { type: 'string', nargs: 1, demandOption: true, describe: 'file to write (- for stdout)' },
  }) as unknown as Argv<ExportArgs>,
  handler: (args) => runVerb(async () => {
    const accountId = args.account === undefined ? null : validateAccountId(args.account, '--account');
    await withExistingLedger(args, async (context) => {
      // Checked before the file is made: an export of an account the ledger never had would
      // be an empty log that verify calls intact (and, with its data key null, shredded).
      if (accountId !== null && !(await accountInLedger(context.store.db, accountId))) {
        throw new UsageError(`account ${accountId} is not in this ledger`);
      }
      const lines = exportLines(context.store.db, {
        ledger_id: context.ledgerId, account_id: accountId, exported_at: rfc3339(context.clock.now()), keys: context.publicKeys(),
      });
      const target = args.out === '-' ? process.stdout : fs.createWriteStream(args.out, { fd: openNewOutFile(args.out) });
      try {
        await pipeline(Readable.from(lines), target);
      } catch (error) {
        // The reader of stdout went away (`export --out - | head`): stop quietly, as a tool killed by
        // SIGPIPE does, with the status it would have, not an I/O error message.
        if (args.out === '-' && (error as NodeJS.ErrnoException).code === 'EPIPE') {
          process.exitCode = EXIT_STDOUT_CLOSED;
          return;
        }
        throw error;
      }
    });
    if (args.out !== '-') print(args, `exported to ${args.out}`, { out: args.out });
  }),
};
