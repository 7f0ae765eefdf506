import type { Generated } from 'kysely';

/**
 * The database shape, one interface per table. Times that the code compares
 * (leases, expiry) are epoch milliseconds; times that users read are RFC 3339.
 * Sensitive data lives only in event payloads (encrypted); other tables point
 * at the event seq that holds it.
 */
export interface Database {
  meta: MetaTable;
  accounts: AccountsTable;
  principals: PrincipalsTable;
  chains: ChainsTable;
  events: EventsTable;
  checkpoints: CheckpointsTable;
  merkle_nodes: MerkleNodesTable;
  checkpoint_cosignatures: CheckpointCosignaturesTable;
  operations: OperationsTable;
  scope_holds: ScopeHoldsTable;
  operation_reports: OperationReportsTable;
  fingerprint_repeats: FingerprintRepeatsTable;
  approvals: ApprovalsTable;
  approval_decisions: ApprovalDecisionsTable;
  ui_sessions: UiSessionsTable;
  webhook_outbox: WebhookOutboxTable;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface AccountsTable {
  id: string;
  /** The account's data key wrapped by the master key; null once shredded. */
  wrapped_data_key: Buffer | null;
  shredded_at: string | null;
  created_at: string;
}

export interface PrincipalsTable {
  id: string;
  account_id: string;
  name: string | null;
  /** JSON array of roles. */
  roles: string;
  /** SHA-256 hex of the API key: keys carry 256 random bits, so no slow hash is needed. */
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

/** The head of one account's chain: locked by every append, so seq stays gapless. */
export interface ChainsTable {
  account_id: string;
  size: number;
  head_hash: string;
  /** JSON array of hex: the Merkle compact range (right-edge subtree roots). */
  frontier: string;
  checkpoint_size: number;
}

export interface EventsTable {
  account_id: string;
  seq: number;
  ts: string;
  type: string;
  operation_id: string | null;
  idempotency_key: string | null;
  fingerprint: string | null;
  actor: string | null;
  agent_run_id: string | null;
  method: string | null;
  route: string | null;
  state: string | null;
  provider_ref: string | null;
  response_status: number | null;
  payload_hash: string | null;
  prev_hash: string;
  hash: string;
  payload: Buffer | null;
}

export interface CheckpointsTable {
  account_id: string;
  tree_size: number;
  root_hash: string;
  created_at: string;
  note: string;
}

/** Hash (hex) of the perfect subtree of leaves [idx * 2^level, (idx + 1) * 2^level), for level >= 8: proofs read these. */
export interface MerkleNodesTable {
  account_id: string;
  level: number;
  idx: number;
  hash: string;
}

/** One witness's cosignature line (C2SP tlog-cosignature) on a signed checkpoint. */
export interface CheckpointCosignaturesTable {
  account_id: string;
  tree_size: number;
  /** The witness's verifier key: name, key id and key, so a renamed or rekeyed witness is another row. */
  witness: string;
  /** `— <name> <base64>` without the newline. */
  line: string;
  created_at: string;
}

export interface OperationsTable {
  id: string;
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
  method: string;
  route: string;
  state: string;
  business_key: string | null;
  exclusive_scope: string | null;
  agent_run_id: string | null;
  provider_ref: string | null;
  requested_by: string;
  lease_seconds: number;
  /** SHA-256 hex of the current lease token; a new lease supersedes the old one. */
  lease_token_hash: string | null;
  lease_expires_at: number | null;
  /** Seq of the event whose payload holds the stored response (the command is the `attempted` event's payload). */
  response_seq: number | null;
  response_status: number | null;
  approval_id: string | null;
  created_at: string;
  updated_at: string;
  version: Generated<number>;
}

/**
 * One row per operation created while its account already had one with the same fingerprint
 * (written by a trigger): the duplicates report reads these instead of every operation.
 */
export interface FingerprintRepeatsTable {
  account_id: string;
  operation_id: string;
  fingerprint: string;
  created_at: string;
  /** Milliseconds since the newest earlier operation of the account with this fingerprint. */
  gap_ms: number;
}

/** A row exists while a non-terminal operation holds the scope: the primary key is the lock. */
export interface ScopeHoldsTable {
  account_id: string;
  scope: string;
  operation_id: string;
}

/** Digest of each accepted lease-holder report: an identical repeat answers as the first did and records nothing. */
export interface OperationReportsTable {
  operation_id: string;
  digest: string;
  account_id: string;
  type: string;
}

export interface ApprovalsTable {
  id: string;
  account_id: string;
  operation_id: string;
  fingerprint: string;
  state: string;
  approvers_required: number;
  requested_by: string;
  requested_at: string;
  expires_at: number;
  grant_ttl_seconds: number;
  /** Seq of the approval_requested event whose payload holds summary and command. */
  request_seq: number;
  /** The signed grant as JSON once approved. */
  grant: string | null;
  grant_expires_at: number | null;
  decided_at: string | null;
}

export interface ApprovalDecisionsTable {
  approval_id: string;
  approver_id: string;
  decision: string;
  decided_at: string;
  /** Seq of the approval_decided event whose payload holds the reason. */
  event_seq: number;
}

export interface UiSessionsTable {
  id_hash: string;
  principal_id: string;
  csrf_token: string;
  expires_at: number;
}

/** An approval webhook not yet delivered: written with the request, deleted once delivered. */
export interface WebhookOutboxTable {
  approval_id: string;
  account_id: string;
  /** Deliveries tried so far. */
  attempts: number;
  /** Epoch ms: not tried before. */
  next_attempt_at: number;
  /** Epoch ms: an instance is posting it until then; null when nobody is. */
  claimed_until: number | null;
  /** Epoch ms: gave up after the last try; null while still pending (the backlog). */
  failed_at: number | null;
  last_error: string | null;
  created_at: string;
}
