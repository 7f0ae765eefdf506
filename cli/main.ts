import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { initCommand } from './commands/init.js';
import { serveCommand } from './commands/serve.js';
import { principalsCommand } from './commands/principals.js';
import { accountsCommand } from './commands/accounts.js';
import { exportCommand } from './commands/export.js';
import { fingerprintCommand } from './commands/fingerprint.js';
import { verifyCommand } from './commands/verify.js';
import { proxyCommand } from './commands/proxy.js';
import { witnessCommand } from './commands/witness.js';
import { proveCommand } from './commands/prove.js';
import { verifyEvidenceCommand } from './commands/verify-evidence.js';
import { EXIT_USAGE } from './output.js';

await yargs(hideBin(process.argv))
  .scriptName('gatehouse')
  .command(initCommand)
  .command(serveCommand)
  .command(principalsCommand)
  .command(accountsCommand)
  .command(exportCommand)
  .command(fingerprintCommand)
  .command(verifyCommand)
  .command(proxyCommand)
  .command(proveCommand)
  .command(verifyEvidenceCommand)
  .command(witnessCommand)
  .demandCommand(1, 'name a command: gatehouse --help lists them')
  .strict()
  .fail((message, error) => {
    if (error && !(error.name === 'YError')) throw error;
    process.stderr.write(`gatehouse: ${message ?? error?.message}\nRun gatehouse --help for usage.\n`);
    process.exit(EXIT_USAGE);
  })
  .help()
  .parseAsync();
