import type { Db } from '../store/store.js';
import type { Ledger } from './ledger.js';
import type { CosignedCheckpoint } from './cosignatures.js';
import { logKeyName } from '../core/log-keys.js';
import { SIG_PREFIX, splitNote } from '../core/note.js';

export interface PanelEvent {
  seq: number;
  ts: string;
  type: string;
  operation_id: string | null;
  actor: string | null;
  agent_run_id: string | null;
  idempotency_key: string | null;
  state: string | null;
  response_status: number | null;
  hash: string;
}

export interface NoteSignature {
  /** The key name on the signature line. */
  name: string;
  /** The log's own signature, or another's (a witness cosignature). */
  by: 'log' | 'witness';
}

export interface ChainPanel {
  account_id: string;
  /** Events in the chain (its size) and the newest event's hash; zero and null for an account without events. */
  size: number;
  head_hash: string | null;
  /** As GET /v1/audit/checkpoints/latest serves it, with the signature lines of its note by name. */
  latest_checkpoint: (CosignedCheckpoint & { signatures: NoteSignature[] }) | null;
  /** The newest events, newest first, before `before_seq` when paging back. */
  events: PanelEvent[];
  /** The `before_seq` of the next (older) page, or null. */
  next_before_seq: number | null;
}

/**
 * An account's chain as the review console shows it: its size and head, the latest signed
 * checkpoint as the API serves it (its note with the witnesses' cosignature lines appended) and
 * the signature lines of that note, and its newest events.
 */
export async function chainPanel(db: Db, ledger: Ledger, ledgerId: string, accountId: string, beforeSeq: number | null, limit: number): Promise<ChainPanel> {
  const head = await db.selectFrom('chains').select(['size', 'head_hash']).where('account_id', '=', accountId).executeTakeFirst();
  const checkpoint = await ledger.latestCheckpoint(accountId);
  let select = db.selectFrom('events')
    .select(['seq', 'ts', 'type', 'operation_id', 'actor', 'agent_run_id', 'idempotency_key', 'state', 'response_status', 'hash'])
    .where('account_id', '=', accountId);
  if (beforeSeq !== null) select = select.where('seq', '<', beforeSeq);
  const rows = await select.orderBy('seq', 'desc').limit(limit + 1).execute();
  const events = rows.slice(0, limit).map((row) => ({ ...row, seq: Number(row.seq) }));
  const signatures = checkpoint ? noteSignatures(checkpoint.note, logKeyName(ledgerId)) : [];
  return {
    account_id: accountId,
    size: head ? Number(head.size) : 0,
    head_hash: head?.head_hash ?? null,
    latest_checkpoint: checkpoint ? { ...checkpoint, signatures } : null,
    events,
    next_before_seq: rows.length > limit ? events[events.length - 1]!.seq : null,
  };
}

/** The signature lines of a signed note (`— <name> <base64>` after the blank line). */
export function noteSignatures(note: string, logName: string): NoteSignature[] {
  return (splitNote(note)?.signatureLines ?? []).filter((line) => line.startsWith(SIG_PREFIX)).map((line) => {
    const name = line.slice(SIG_PREFIX.length).split(' ')[0] ?? '';
    return { name, by: name === logName ? 'log' : 'witness' };
  });
}
