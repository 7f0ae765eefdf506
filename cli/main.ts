import { createRequire } from 'node:module';
import type yargsType from 'yargs';
import type * as yargsHelpers from 'yargs/helpers';
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
import { EXIT_USAGE, UsageError } from './output.js';
import { ownVersion } from './version.js';

// yargs through its CommonJS build, on purpose. Its ESM build lays out --help with cliui's ESM
// build, whose line wrapping cuts words in half ("(SQLite / ) gatehouse.db", "1 M / iB"); the
// CommonJS one wraps at word boundaries (wrap-ansi). It also loads one bundled file instead of
// some thirty modules. Only the values come this way: the types are yargs' own.
const require = createRequire(import.meta.url);
const yargs = require('yargs') as typeof yargsType;
const { hideBin } = require('yargs/helpers') as typeof yargsHelpers;

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
  // yargs 17 passes the running command's option declarations (getOptions()); @types/yargs calls them aliases.
  .check((argv, options) => givenOnce(argv, options as unknown as DeclaredOptions) && givenWithValues(hideBin(process.argv), options as unknown as DeclaredOptions), true)
  .fail((message, error) => {
    if (error && !(error.name === 'YError' || error instanceof UsageError)) throw error;
    process.stderr.write(`gatehouse: ${message ?? error?.message}\nRun gatehouse --help for usage.\n`);
    process.exit(EXIT_USAGE);
  })
  .version(ownVersion())
  .help()
  .parseAsync();

/**
 * yargs turns an option given twice into an array of its values. Only options declared as
 * arrays (the repeatable ones: --role, --checkpoint, --witness-key, --witness, --log) take
 * one; any other option given more than once is a usage error (exit 2), checked here for
 * every verb from the options the running command declared, before its handler sees an
 * array where it expects one value.
 */
interface DeclaredOptions {
  key: Record<string, unknown>;
  array: string[];
  boolean: string[];
}

function givenOnce(argv: Record<string, unknown>, options: DeclaredOptions): true {
  for (const key of Object.keys(options.key)) {
    const value = argv[key];
    if (Array.isArray(value) && !options.array.includes(key)) {
      throw new UsageError(`--${key} was given ${value.length} times; give it once`);
    }
  }
  return true;
}

/**
 * yargs reads an option given with no value (`--checkpoint` last, or followed by another option)
 * as an empty string, an empty array or no number at all, and the verb then runs without it:
 * `verify --checkpoint` with an empty shell variable would skip the very check it names and
 * answer intact. Every option that takes a value must be given one (exit 2).
 */
function givenWithValues(args: string[], options: DeclaredOptions): true {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    const name = /^--([^=]+)$/.exec(arg)?.[1];
    if (name === undefined || !(name in options.key) || options.boolean.includes(name)) continue;
    const next = args[i + 1];
    const isValue = next !== undefined && !(next.startsWith('-') && next !== '-' && !/^-\d/.test(next));
    if (!isValue) throw new UsageError(`--${name} needs a value`);
  }
  return true;
}
