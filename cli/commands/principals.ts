import type { Argv, CommandModule } from 'yargs';
import { ROLES, type Role } from '../../src/principals/roles.js';
import { validateAccountId } from '../../src/principals/accounts.js';
import { EXIT_USAGE, print, runVerb, storeOptions, type StoreArgs } from '../output.js';
import { withContext, withExistingLedger } from '../with-context.js';

interface AddArgs extends StoreArgs {
  account: string;
  role: Role[];
  name?: string;
}

interface RevokeArgs extends StoreArgs {
  id: string;
}

const add: CommandModule<object, AddArgs> = {
  command: 'add',
  describe: 'create a principal and print its API key (shown once)',
  builder: (y) => y.options({
    ...storeOptions,
    account: { type: 'string', demandOption: true },
    role: { type: 'array', string: true, choices: ROLES, demandOption: true },
    name: { type: 'string' },
  }) as unknown as Argv<AddArgs>,
  handler: (args) => runVerb(async () => {
    const accountId = validateAccountId(args.account, '--account');
    // May start the ledger on a data dir that has keys and no database (docs/cli.md).
    const created = await withContext(args, (context) =>
      context.principals.create({ account_id: accountId, roles: args.role, name: args.name ?? null }));
    print(args, `principal: ${created.principal.id}\nkey: ${created.key}`, created);
  }),
};

const list: CommandModule<object, StoreArgs> = {
  command: 'list',
  describe: 'list principals (never their keys)',
  builder: (y) => y.options(storeOptions),
  handler: (args) => runVerb(async () => {
    const principals = await withExistingLedger(args, (context) => context.principals.list());
    const lines = principals.map((p) =>
      `${p.id}\t${p.account_id}\t${p.roles.join(',')}\t${p.revoked_at ? `revoked ${p.revoked_at}` : 'active'}\t${p.name ?? ''}`);
    print(args, lines.join('\n') || '(no principals)', { principals });
  }),
};

const revoke: CommandModule<object, RevokeArgs> = {
  command: 'revoke <id>',
  describe: 'revoke a principal\'s key (at once here, within 5 s in other instances)',
  builder: (y) => y.options(storeOptions).positional('id', { type: 'string', demandOption: true }) as unknown as Argv<RevokeArgs>,
  handler: (args) => runVerb(async () => {
    const revoked = await withExistingLedger(args, (context) => context.principals.revoke(args.id));
    if (!revoked) {
      process.stderr.write(`gatehouse: no active principal ${args.id}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    print(args, `revoked ${args.id}`, { revoked: args.id });
  }),
};

export const principalsCommand: CommandModule = {
  command: 'principals',
  describe: 'manage principals and their API keys',
  builder: (y) => y.command(add).command(list).command(revoke).demandCommand(1, 'name a subcommand: add, list or revoke'),
  handler: () => undefined,
};
