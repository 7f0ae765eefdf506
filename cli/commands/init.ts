import type { CommandModule } from 'yargs';
import { readConfig } from '../../src/config/config.js';
import { createFirstAdmin, createKeys, hasKeyFiles } from '../../src/bootstrap.js';
import { EXIT_USAGE, print, runVerb, storeOptions, storeOptionsOf, type StoreArgs } from '../output.js';

export const initCommand: CommandModule<object, StoreArgs> = {
  command: 'init',
  describe: 'create the master and signing keys, the database and a first admin key',
  builder: (y) => y.options(storeOptions),
  handler: (args) => runVerb(async () => {
    const config = readConfig(storeOptionsOf(args));
    if (hasKeyFiles(config)) {
      process.stderr.write(`gatehouse: ${config.dataDir} already holds keys; refusing to overwrite them\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    createKeys(config);
    const { openContext } = await import('../../src/context.js');
    const context = await openContext(config);
    try {
      const adminKey = await createFirstAdmin(context);
      print(args, adminKey ? `admin key: ${adminKey}` : 'the store already has principals; no admin key was made', {
        data_dir: config.dataDir, ledger_id: context.ledgerId, admin_key: adminKey,
      });
    } finally {
      await context.close();
    }
  }),
};
