/**
 * `gatehouse verify` without the command line: pick the reader, decide which keys to trust,
 * read the saved checkpoints and the master key, run every account through the verifier.
 * Offline by construction: it imports src/core and src/verify only.
 */
import path from 'node:path';
import { type MasterKey, withSodium } from '../core/account-data-key.js';
import { matchesMasterKeyCheck } from '../core/master-key-check.js';
import type { NoteVerifierKey } from '../core/signing-key.js';
import { VerifyInputError } from './errors.js';
import type { ParallelSettings } from '../config/verify-tuning.js';
import { defaultDataDir } from '../config/config.js';
import { ExportLedgerReader } from './export-reader.js';
import { type SavedCheckpointFile, SavedCheckpointFileError, readSavedCheckpointFile } from './saved-checkpoint-file.js';
import { readKeyFile } from './key-file.js';
import { createProgress } from './progress.js';
import { type VerifyReport, buildReport } from './report.js';
import { VerificationRun } from './run.js';
import { keysFromDataDir, keysFromFile, keysFromList, parsePublicKey } from './trust.js';
import { witnessPolicy } from './witness-policy.js';

export type VerifyInput = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string } | { kind: 'export'; file: string };

export interface VerifyOptions {
  input: VerifyInput;
  account: string | null;
  publicKey?: string;
  keysFile?: string;
  checkpointFiles: string[];
  masterKeyFile?: string;
  /** Given explicitly (--data-dir)? An export then trusts this dir's key rather than its own header. */
  dataDir: string | undefined;
  warn(message: string): void;
  /** Where the progress bar goes (drawn only when it is a terminal). */
  progressTo: NodeJS.WriteStream;
  /** How a large SQLite account is spread over threads. */
  parallel: ParallelSettings;
  /** `--witness-key`: cosignature/v1 verifier keys of trusted witnesses. */
  witnessKeys?: string[];
  /** `--min-witnesses` (default 1 when witness keys are given). */
  minWitnesses?: number;
}

interface Reader {
  ledgerId: string | null;
  masterKeyCheck: string | null;
  accounts(): string[] | Promise<string[]>;
  approximateEventCount(account: string | null): number | Promise<number>;
  verifyAccount(run: VerificationRun, account: string): void | Promise<void>;
  close(): void | Promise<void>;
}

export async function verifyLedger(options: VerifyOptions): Promise<VerifyReport> {
  const given = options.checkpointFiles.map(readGivenCheckpoint);
  if (options.account !== null) {
    const foreign = given.find((g) => g.accountId !== options.account);
    if (foreign) throw new VerifyInputError(`--checkpoint ${foreign.file} is for account ${foreign.accountId}, not --account ${options.account}`);
  }
  witnessPolicy(options.witnessKeys ?? [], options.minWitnesses); // bad witness options: exit 2 before any reading
  const masterKeyBytes = options.masterKeyFile === undefined ? undefined : readKeyFile(options.masterKeyFile, 'master key');
  // libsodium is loaded only here, for a master key: without one no payload is opened.
  const masterKey = masterKeyBytes === undefined ? undefined : await withSodium(masterKeyBytes);
  const { input } = options;

  if (input.kind === 'export') {
    const reader = await ExportLedgerReader.open(input.file);
    const run = newRun(options, reader.ledgerId, trustFor(options, reader.ledgerId, reader.header.keys), given, masterKey, 0);
    await reader.verify(run.run, options.account);
    // As for a database: a name the export does not hold (and no given checkpoint names) is a mistake in the command, not an intact log.
    if (options.account !== null && !run.run.hasVerdict(options.account) && !given.some((g) => g.accountId === options.account)) {
      throw new VerifyInputError(`account ${options.account} is not in this export`);
    }
    return finish(run);
  }

  // Only the driver this input needs is loaded: verify starts faster without the other one.
  const reader: Reader = input.kind === 'sqlite'
    ? (await import('./sqlite-reader.js')).SqliteLedgerReader.open(input.file, options.parallel, options.warn)
    : await (await import('./postgres-reader.js')).PostgresLedgerReader.open(input.url);
  try {
    if (masterKeyBytes !== undefined) refuseAnotherMasterKey(options.masterKeyFile!, masterKeyBytes, reader.masterKeyCheck);
    const trusted = trustFor(options, reader.ledgerId, null);
    const known = await reader.accounts();
    let accounts = known;
    if (options.account !== null) {
      if (!known.includes(options.account) && given.length === 0) throw new VerifyInputError(`account ${options.account} is not in this ledger`);
      accounts = known.includes(options.account) ? [options.account] : [];
    }
    const total = await reader.approximateEventCount(options.account);
    const run = newRun(options, reader.ledgerId, trusted, given, masterKey, total);
    for (const account of accounts) await reader.verifyAccount(run.run, account);
    return finish(run);
  } finally {
    await reader.close();
  }
}

/** To verify, a file that is no saved checkpoint is input it cannot read (exit 2), like a bad key file. */
function readGivenCheckpoint(file: string): SavedCheckpointFile {
  try {
    return readSavedCheckpointFile(file);
  } catch (error) {
    throw error instanceof SavedCheckpointFileError ? new VerifyInputError(error.message) : error;
  }
}

/**
 * A master key that is not the ledger's (its check value differs from the one the database
 * recorded) is a mistake in the command, not evidence: without this every account's data key
 * would fail to unwrap and be reported tampered (exit 1). A database written before the check
 * value existed has none, and its accounts are judged one by one as before.
 */
function refuseAnotherMasterKey(file: string, masterKey: Uint8Array, recorded: string | null): void {
  if (recorded === null || matchesMasterKeyCheck(masterKey, recorded)) return;
  throw new VerifyInputError(
    `--master-key ${file} is not this ledger's master key (the ledger records a check value of its master key, and this key does not match it): ` +
      'pass the master.key of the data dir this ledger was created in (or the GATEHOUSE_MASTER_KEY its service runs with, saved to a file)',
  );
}

function newRun(
  options: VerifyOptions, ledgerId: string | null, trustedKeys: NoteVerifierKey[], given: SavedCheckpointFile[],
  masterKey: MasterKey | undefined, total: number,
) {
  const progress = createProgress(options.progressTo, total);
  const witnesses = witnessPolicy(options.witnessKeys ?? [], options.minWitnesses);
  const run = new VerificationRun({
    trustedKeys, ledgerId, given, onProgress: (n) => progress.update(n), ...(masterKey !== undefined ? { masterKey } : {}),
    ...(witnesses !== null ? { witnesses } : {}),
  });
  return { run, progress };
}

function finish({ run, progress }: ReturnType<typeof newRun>): VerifyReport {
  const verdicts = run.finish();
  progress.done();
  return buildReport(verdicts);
}

/** Pinned keys when the user gave them; otherwise the export's own keys or the data dir's, with a warning. */
function trustFor(options: VerifyOptions, ledgerId: string | null, exportKeys: unknown[] | null): NoteVerifierKey[] {
  if (options.publicKey !== undefined && options.keysFile !== undefined) throw new VerifyInputError('give --public-key or --keys, not both');
  if (options.publicKey !== undefined) return [parsePublicKey(options.publicKey, ledgerId)];
  if (options.keysFile !== undefined) return keysFromFile(options.keysFile, ledgerId);
  if (exportKeys !== null && exportKeys.length > 0 && options.dataDir === undefined) {
    options.warn('warning: trusting the keys listed in the export itself; they are not pinned (pass --public-key or --keys with the key you saved from GET /v1/keys)');
    return keysFromList(exportKeys, ledgerId, 'the export header');
  }
  const dataDir = path.resolve(options.dataDir ?? defaultDataDir(options.input.kind === 'sqlite' ? options.input.file : undefined));
  options.warn(`warning: trusting the signing key in ${dataDir}; it is not pinned (pass --public-key or --keys with the key you saved from GET /v1/keys)`);
  return keysFromDataDir(dataDir, ledgerId);
}
