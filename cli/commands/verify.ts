/**
 * `gatehouse verify` (docs/cli.md#gatehouse-verify): offline verification of a SQLite file, a PostgreSQL
 * database or an export. Imports src/core and src/verify only — no context, no store, no
 * network beyond the database it is pointed at.
 */
import type { Argv, CommandModule } from 'yargs';
import { EXIT_INTACT, EXIT_TAMPERED, EXIT_UNREADABLE, VerifyInputError, ioErrorCode } from '../../src/verify/errors.js';
import { reportLines } from '../../src/verify/report.js';
import type { VerifyInput } from '../../src/verify/verify-ledger.js';
import { postgresUrlProblem } from '../../src/config/config.js';
import { readVerifyTuning } from '../../src/config/verify-tuning.js';
import { witnessKeyOptions } from '../output.js';

interface VerifyArgs {
  export?: string;
  db?: string;
  'database-url'?: string;
  account?: string;
  'public-key'?: string;
  keys?: string;
  checkpoint?: string[];
  'master-key'?: string;
  'data-dir'?: string;
  'witness-key'?: string[];
  'min-witnesses'?: number;
  json: boolean;
}

export const verifyCommand: CommandModule<object, VerifyArgs> = {
  command: 'verify [export]',
  describe: 'verify the log offline: hashes, links, seq, checkpoints, saved checkpoints, payloads (exit 0 intact, 1 tampered, 2 unreadable)',
  builder: (y) => y
    .positional('export', { type: 'string', describe: 'an NDJSON file written by gatehouse export' })
    .options({
      db: { type: 'string', describe: 'a SQLite database file' },
      'database-url': { type: 'string', describe: 'a PostgreSQL URL' },
      account: { type: 'string', describe: 'verify this account only' },
      'public-key': { type: 'string', describe: 'trusted log key: a note verifier key or a base64 Ed25519 public key' },
      keys: { type: 'string', describe: 'trusted keys: a file with the JSON of GET /v1/keys' },
      checkpoint: { type: 'string', array: true, describe: 'a saved checkpoint (JSON or note text) the log must contain; repeatable' },
      'master-key': { type: 'string', describe: 'a master.key file: every payload must decrypt' },
      'data-dir': { type: 'string', describe: 'where signing.key is when no key is given (default ./data)' },
      ...witnessKeyOptions,
      json: { type: 'boolean', default: false, describe: 'machine-readable output' },
    }) as unknown as Argv<VerifyArgs>,
  handler: async (args) => {
    process.exitCode = await runVerify(args);
  },
};

async function runVerify(args: VerifyArgs): Promise<number> {
  try {
    const inputs: VerifyInput[] = [];
    if (args.export !== undefined) inputs.push({ kind: 'export', file: args.export });
    if (args.db !== undefined) inputs.push({ kind: 'sqlite', file: args.db });
    if (args['database-url'] !== undefined) {
      const problem = postgresUrlProblem(args['database-url']);
      if (problem !== null) throw new VerifyInputError(`--database-url ${problem}`);
      inputs.push({ kind: 'postgres', url: args['database-url'] });
    }
    if (inputs.length !== 1) {
      throw new VerifyInputError('name exactly one input: --db FILE, --database-url URL or an EXPORT.ndjson file');
    }
    const { verifyLedger } = await import('../../src/verify/verify-ledger.js');
    const report = await verifyLedger({
      input: inputs[0]!,
      account: args.account ?? null,
      ...(args['public-key'] !== undefined ? { publicKey: args['public-key'] } : {}),
      ...(args.keys !== undefined ? { keysFile: args.keys } : {}),
      checkpointFiles: args.checkpoint ?? [],
      ...(args['master-key'] !== undefined ? { masterKeyFile: args['master-key'] } : {}),
      dataDir: args['data-dir'],
      witnessKeys: args['witness-key'] ?? [],
      ...(args['min-witnesses'] !== undefined ? { minWitnesses: args['min-witnesses'] } : {}),
      warn: (message) => process.stderr.write(`gatehouse verify: ${message}\n`),
      progressTo: process.stderr,
      parallel: readVerifyTuning(),
    });
    for (const warning of report.warnings ?? []) process.stderr.write(`gatehouse verify: warning: ${warning}\n`);
    if (args.json) process.stdout.write(JSON.stringify(report) + '\n');
    else process.stdout.write((report.accounts.length === 0 ? ['no accounts in this ledger'] : reportLines(report)).join('\n') + '\n');
    return report.ok ? EXIT_INTACT : EXIT_TAMPERED;
  } catch (error) {
    // Unreadable input is exit 2 with one line; never a stack trace for bad input.
    const message = error instanceof VerifyInputError
      ? error.message
      : `cannot read the ledger: ${ioErrorCode(error) ?? ''} ${(error as Error)?.message ?? String(error)}`.replace(/\s+/g, ' ');
    process.stderr.write(`gatehouse verify: ${message}\n`);
    return EXIT_UNREADABLE;
  }
}
