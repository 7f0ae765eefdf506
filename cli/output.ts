import { DomainError } from '../src/core/errors.js';
import { StoreLocationError } from '../src/config/config.js';
import { KeyFileError } from '../src/config/key-files.js';
import { PolicyConfigError } from '../src/policies/config-error.js';
import { StoreUnavailableError } from '../src/store/store.js';

export const EXIT_TAMPERED = 1;
export const EXIT_USAGE = 2;
/** What a process killed by SIGPIPE exits with (128 + 13): the status a verb gives when its stdout's reader went away. */
export const EXIT_STDOUT_CLOSED = 141;

/** Options every verb that touches the store takes (docs/cli.md#common-rules). */
export const storeOptions = {
  'data-dir': { type: 'string', describe: 'directory with master.key, signing.key and (SQLite) gatehouse.db (default ./data, or the --db file\'s directory when it holds the keys)' },
  db: { type: 'string', describe: 'SQLite database file (default: DATA_DIR/gatehouse.db)' },
  'database-url': { type: 'string', describe: 'PostgreSQL URL (also GATEHOUSE_DATABASE_URL)' },
  json: { type: 'boolean', default: false, describe: 'machine-readable output' },
} as const;

/**
 * `--witness-key KEY … [--min-witnesses N]` of the two offline checkers, verify and
 * verify-evidence: one definition, and one check of the values (src/verify/witness-policy.ts),
 * so that the two can never accept different quorums.
 */
export const witnessKeyOptions = {
  'witness-key': { type: 'string', array: true, describe: 'a trusted witness (cosignature/v1 verifier key); repeatable' },
  'min-witnesses': { type: 'number', describe: 'valid cosignatures by distinct --witness-key witnesses the checkpoint must carry (verify: the newest of each account), 1 to the number of --witness-key; default 1 with --witness-key' },
} as const;

export interface StoreArgs {
  'data-dir'?: string;
  db?: string;
  'database-url'?: string;
  json: boolean;
}

/**
 * The store the verb's flags name. `--db` and `--database-url` name two different stores:
 * given both, which one a command should touch is the user's to say, so it is a usage error
 * (as verify's "exactly one input"). A flag still wins over GATEHOUSE_DATABASE_URL, as flags
 * win over the environment everywhere.
 */
export function storeOptionsOf(args: StoreArgs) {
  if (args.db !== undefined && args['database-url'] !== undefined) {
    throw new UsageError('give --db FILE (SQLite) or --database-url URL (PostgreSQL), not both');
  }
  return { dataDir: args['data-dir'], db: args.db, databaseUrl: args['database-url'] };
}

export function print(args: { json: boolean }, human: string, machine: unknown): void {
  process.stdout.write(args.json ? JSON.stringify(machine) + '\n' : human + '\n');
}

/** A flag's value that cannot be used: exit 2 with the message, like yargs' own usage errors. */
export class UsageError extends Error {}

/** A `--port`-like option. yargs reads a number option given `abc` as NaN: that is not repeated back. */
export function portArg(flag: string, value: number): number {
  if (Number.isInteger(value) && value >= 0 && value <= 65535) return value;
  throw new UsageError(`${flag} must be a whole number from 0 to 65535${givenAs(value)}`);
}

/** `, not 1.5` for a number given; nothing for text that was no number at all (NaN), which says nothing to the user. */
export function givenAs(value: number): string {
  return Number.isNaN(value) ? '' : `, not ${value}`;
}

/** Known failures become one clear line on stderr and exit 2; anything else is a bug and keeps its stack. */
export async function runVerb(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      // Its own message speaks to an API client (retry with the same key); here the database is the news.
      const cause = (error.cause as Error | undefined)?.message ?? 'no answer';
      process.stderr.write(`gatehouse: cannot reach the database: ${cause}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    if (error instanceof UsageError || error instanceof DomainError || error instanceof KeyFileError || error instanceof PolicyConfigError || error instanceof StoreLocationError || isIoError(error)) {
      process.stderr.write(`gatehouse: ${(error as Error).message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    throw error;
  }
}

/**
 * An operating-system or database failure: Node's error codes, SQLite's, and PostgreSQL's
 * (a server error carries `severity` and a five-character SQLSTATE: `3D000` for a database
 * that does not exist, `28P01` for a wrong password, `57P03` for a server starting up).
 */
function isIoError(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  if (typeof code !== 'string') return false;
  return /^(E[A-Z]+|SQLITE_\w+)$/.test(code) || (typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code));
}
