/**
 * Reads a `gatehouse export` NDJSON file for verify, line by line (readline: memory stays
 * flat whatever the size). The export puts checkpoints after the events, but the verifier
 * must know a checkpoint before the log passes its size, so the file is read twice: a first
 * pass keeps only the checkpoint lines (a few hundred bytes per thousand events), the second
 * streams the events.
 *
 * A line that does not parse, in the middle or cut off at the end, is evidence that the file
 * was damaged after the last good event (exit 1, that seq + 1). A file whose first line is not
 * an export header is not an export at all (exit 2).
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import type { VerifierEvent } from '../core/verifier-event.js';
import { VerifyInputError } from './errors.js';
import type { VerificationRun } from './run.js';

export interface ExportHeaderLine {
  ledger_id: string | null;
  account_id: string | null;
  keys: unknown[];
  data_keys: Record<string, string | null> | undefined;
}

function lines(file: string): readline.Interface {
  const input = fs.createReadStream(file, { encoding: 'utf8' });
  return readline.createInterface({ input, crlfDelay: Infinity });
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line); // untrusted input
  } catch {
    return undefined;
  }
}

export class ExportLedgerReader {
  readonly header: ExportHeaderLine;
  readonly #file: string;
  /** account → its checkpoint lines, from the first pass. */
  readonly #checkpoints = new Map<string, VerifierCheckpoint[]>();

  private constructor(file: string, header: ExportHeaderLine) {
    this.#file = file;
    this.header = header;
  }

  get ledgerId(): string | null {
    return this.header.ledger_id;
  }

  static async open(file: string): Promise<ExportLedgerReader> {
    try {
      const stat = fs.statSync(file);
      if (!stat.isFile()) throw new VerifyInputError(`${file} is not a file`);
    } catch (error) {
      if (error instanceof VerifyInputError) throw error;
      throw new VerifyInputError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    let header: ExportHeaderLine | null = null;
    const byAccount = new Map<string, VerifierCheckpoint[]>();
    let first = true;
    for await (const line of lines(file)) {
      if (first) {
        first = false;
        header = parseHeader(line, file);
        continue;
      }
      // Cheap filter: only checkpoint lines are kept in this pass.
      if (!line.includes('"checkpoint"')) continue;
      const record = parseLine(line) as Record<string, unknown> | undefined;
      if (record?.kind !== 'checkpoint' || typeof record.account_id !== 'string') continue;
      const list = byAccount.get(record.account_id) ?? [];
      list.push(record as unknown as VerifierCheckpoint);
      byAccount.set(record.account_id, list);
    }
    if (header === null) throw new VerifyInputError(`${file} is empty: not a Gatehouse export`);
    const reader = new ExportLedgerReader(file, header);
    for (const [account, list] of byAccount) reader.#checkpoints.set(account, list);
    return reader;
  }

  /** An account without a data_keys member (or a header without data_keys) has no data key: see AccountStart. */
  #start(run: VerificationRun, accountId: string): void {
    const keys = this.header.data_keys;
    const wrapped = keys === undefined || !(accountId in keys) ? undefined : keys[accountId];
    run.beginAccount({
      accountId,
      checkpoints: (this.#checkpoints.get(accountId) ?? []).map(({ tree_size, root_hash, note }) => ({ tree_size, root_hash, note })),
      ...(wrapped === undefined ? {} : { wrappedDataKey: wrapped === null ? null : new Uint8Array(Buffer.from(wrapped, 'base64')) }),
    });
  }

  /** Second pass: every event, grouped by account; `only` restricts it to one account. */
  async verify(run: VerificationRun, only: string | null): Promise<void> {
    const fixed = this.header.account_id;
    if (fixed !== null && only !== null && fixed !== only) throw new VerifyInputError(`this export holds account ${fixed}, not ${only}`);
    let lineNo = 0;
    const include = (account: string): boolean => only === null || account === only;
    if (fixed !== null) this.#start(run, fixed);
    for await (const line of lines(this.#file)) {
      if (++lineNo === 1) continue;
      const record = line === '' ? undefined : (parseLine(line) as Record<string, unknown> | null | undefined);
      if (record !== null && typeof record === 'object' && record.kind === 'checkpoint') continue;
      const event = record !== null && typeof record === 'object' && record.kind === 'event' ? toEvent(record) : null;
      if (event === null) {
        if (run.currentAccount === null) this.#start(run, only ?? '(unknown account)');
        run.brokenRecord(`line ${lineNo} of the export is not ${record === undefined ? 'valid JSON (truncated or corrupted)' : 'an event or checkpoint record'}`);
        continue;
      }
      const account = (event.header as { account_id?: unknown } | null)?.account_id;
      if (fixed === null && typeof account === 'string' && account !== run.currentAccount) {
        if (!include(account)) continue;
        // An account seen again after another one is fed to the current verifier, which reports it.
        if (!run.hasVerdict(account)) this.#start(run, account);
      }
      if (run.currentAccount === null) {
        if (only !== null) continue;
        this.#start(run, typeof account === 'string' ? account : '(unknown account)');
      }
      run.addEvent(event);
    }
    run.endAccount();
    for (const account of this.#checkpoints.keys()) {
      if (include(account) && !run.hasVerdict(account)) {
        this.#start(run, account);
        run.endAccount();
      }
    }
  }
}

function parseHeader(line: string, file: string): ExportHeaderLine {
  const h = parseLine(line) as Record<string, unknown> | undefined;
  if (h === null || typeof h !== 'object' || Array.isArray(h) || h.format !== 'gatehouse-export') {
    throw new VerifyInputError(`${file} is not a Gatehouse export (its first line is not {"format": "gatehouse-export", ...})`);
  }
  if (h.version !== 1) throw new VerifyInputError(`${file} is a Gatehouse export of version ${JSON.stringify(h.version)}; this verify reads version 1`);
  const dataKeys = h.data_keys !== null && typeof h.data_keys === 'object' ? (h.data_keys as Record<string, string | null>) : undefined;
  return {
    ledger_id: typeof h.ledger_id === 'string' ? h.ledger_id : null,
    account_id: typeof h.account_id === 'string' ? h.account_id : null,
    keys: Array.isArray(h.keys) ? h.keys : [],
    data_keys: dataKeys,
  };
}

function toEvent(record: Record<string, unknown>): VerifierEvent | null {
  const { header, hash, payload } = record;
  if (payload !== null && typeof payload !== 'string') return null;
  return {
    header: header as VerifierEvent['header'],
    hash: hash as string,
    payload: payload === null ? null : new Uint8Array(Buffer.from(payload, 'base64')),
  };
}
