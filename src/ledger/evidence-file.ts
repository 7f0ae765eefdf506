/**
 * `gatehouse prove`: gathers an evidence file (src/core/evidence.ts) from the store: the event
 * as the audit routes show it, a signed checkpoint covering it (the newest one, a fresh one
 * when none covers it yet, or one the auditor saved) with its witness cosignatures, and the
 * inclusion proof up to that checkpoint's root.
 */
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import { EVIDENCE_FORMAT } from '../core/evidence.js';
import { DomainError } from '../core/errors.js';
import { type CosignedCheckpoint, withCosignaturesOne } from './cosignatures.js';
import { type ExportedEvent, toExportedEvent } from './export.js';
import { type InclusionProofJson, inclusionProofOf, logSize } from './proofs.js';
import { storedCheckpointFor } from './saved-checkpoint.js';
import type { Ledger } from './ledger.js';
import type { Db } from '../store/store.js';

export interface EvidenceFile {
  format: typeof EVIDENCE_FORMAT;
  version: 1;
  ledger_id: string;
  event: Omit<ExportedEvent, 'kind'>;
  checkpoint: CosignedCheckpoint;
  inclusion: InclusionProofJson;
  keys: unknown[];
}

/** What an evidence file is gathered from: the service's context (AppContext) fits it. */
export interface EvidenceSource {
  store: { db: Db };
  ledger: Pick<Ledger, 'checkpoint'>;
  ledgerId: string;
  publicKeys(): unknown[];
}

export async function buildEvidence(context: EvidenceSource, accountId: string, seq: number, given: VerifierCheckpoint | null): Promise<EvidenceFile> {
  const db = context.store.db;
  const size = await logSize(db, accountId);
  if (seq > size) throw new DomainError('invalid_request', `account ${accountId} has ${size} events, so there is no event ${seq}`);
  let checkpoint;
  if (given !== null) {
    checkpoint = await storedCheckpointFor(db, context.ledgerId, accountId, given);
    if (checkpoint.tree_size < seq) throw new DomainError('invalid_request', `the given checkpoint covers ${checkpoint.tree_size} events, not event ${seq}`);
  } else {
    checkpoint = await db.selectFrom('checkpoints').selectAll().where('account_id', '=', accountId)
      .where('tree_size', '>=', seq).orderBy('tree_size', 'desc').limit(1).executeTakeFirst()
      ?? await context.ledger.checkpoint(accountId);
  }
  const row = await db.selectFrom('events').selectAll().where('account_id', '=', accountId).where('seq', '=', seq).executeTakeFirstOrThrow();
  const { header, hash, payload } = toExportedEvent(row);
  return {
    format: EVIDENCE_FORMAT,
    version: 1,
    ledger_id: context.ledgerId,
    event: { header, hash, payload },
    checkpoint: await withCosignaturesOne(db, checkpoint),
    inclusion: await inclusionProofOf(db, accountId, seq, Number(checkpoint.tree_size)),
    keys: context.publicKeys(),
  };
}
