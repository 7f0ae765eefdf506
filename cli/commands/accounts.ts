import type { Argv, CommandModule } from 'yargs';
import { validateAccountId } from '../../src/principals/accounts.js';
import { EXIT_USAGE, print, runVerb, storeOptions, type StoreArgs } from '../output.js';
import { withExistingLedger } from '../with-context.js';

interface ShredArgs extends StoreArgs {
  account: string;
  yes: boolean;
}

const shred: CommandModule<object, ShredArgs> = {
  command: 'shred <account>',
  describe: 'destroy an account\'s data key: its payloads become unreadable, its chain still verifies',
  builder: (y) => y.options({ ...storeOptions, yes: { type: 'boolean', default: false, describe: 'confirm: this cannot be undone' } })
    .positional('account', { type: 'string', demandOption: true }) as unknown as Argv<ShredArgs>,
  handler: (args) => runVerb(async () => {
    const accountId = validateAccountId(args.account, 'ACCOUNT');
    if (!args.yes) {
      process.stderr.write(`gatehouse: shredding ${accountId} destroys its data key for ever; add --yes to confirm\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const shredded = await withExistingLedger(args, (context) => context.ledger.shred(accountId));
    if (!shredded) {
      process.stderr.write(`gatehouse: account ${accountId} does not exist or is already shredded\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    print(args, `account ${accountId}: data key destroyed`, { account_id: accountId, shredded: true });
  }),
};

export const accountsCommand: CommandModule = {
  command: 'accounts',
  describe: 'manage accounts',
  builder: (y) => y.command(shred).demandCommand(1, 'name a subcommand: shred'),
  handler: () => undefined,
};
