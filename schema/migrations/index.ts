import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';
import * as operationReports from './0002-operation-reports.js';
import * as dropCommandSeq from './0003-drop-command-seq.js';
import * as webhookOutbox from './0004-webhook-outbox.js';
import * as proofsAndWitnesses from './0005-proofs-and-witnesses.js';
import * as reviewIndexes from './0006-review-indexes.js';
import * as leaseDueIndex from './0007-lease-due-index.js';
import * as fingerprintRepeatLookup from './0008-fingerprint-repeat-lookup.js';
import * as approvalExpiryIndex from './0009-approval-expiry-index.js';

/** A static index: migrations are bundled with the code, never discovered on disk at run time. */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-operation-reports': operationReports,
  '0003-drop-command-seq': dropCommandSeq,
  '0004-webhook-outbox': webhookOutbox,
  '0005-proofs-and-witnesses': proofsAndWitnesses,
  '0006-review-indexes': reviewIndexes,
  '0007-lease-due-index': leaseDueIndex,
  '0008-fingerprint-repeat-lookup': fingerprintRepeatLookup,
  '0009-approval-expiry-index': approvalExpiryIndex,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
