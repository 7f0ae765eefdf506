/**
 * `gatehouse prove --checkpoint FILE`: the checkpoint an auditor saved must be exactly one this
 * ledger signed for the account — the same origin, size and root, the same log signature, and
 * no signature line the ledger does not hold (witness cosignatures stored later may be missing
 * from an older copy). A copy that differs in any of these is refused, naming what differs,
 * rather than silently proving against the stored checkpoint of that size: whoever holds the
 * altered file would otherwise believe it was accepted.
 */
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import type { Checkpoint } from '../core/wire.js';
import { DomainError } from '../core/errors.js';
import { checkpointOrigin } from '../core/log-keys.js';
import { splitNote } from '../core/note.js';
import type { Db } from '../store/store.js';

/** The stored checkpoint the saved one is; throws invalid_request naming the first difference. */
export async function storedCheckpointFor(db: Db, ledgerId: string, accountId: string, saved: VerifierCheckpoint): Promise<Checkpoint> {
  const refuse = (why: string): never => {
    throw new DomainError('invalid_request', `the given checkpoint is not one this ledger signed for account ${accountId}: ${why}`);
  };
  // untrusted input: the file's note and members are only compared, never trusted
  const [origin = '', sizeLine = ''] = saved.note.split('\n');
  const expectedOrigin = checkpointOrigin(ledgerId, accountId);
  if (origin !== expectedOrigin) refuse(`its origin is ${JSON.stringify(origin)}, not ${JSON.stringify(expectedOrigin)}`);
  if (!/^(0|[1-9]\d{0,15})$/.test(sizeLine)) refuse(`its second line ${JSON.stringify(sizeLine)} is not a tree size`);
  const size = Number(sizeLine);
  if (saved.account_id !== undefined && saved.account_id !== accountId) refuse(`its account_id ${JSON.stringify(saved.account_id)} differs from its note's origin`);
  if (saved.tree_size !== undefined && saved.tree_size !== size) refuse(`its tree_size ${JSON.stringify(saved.tree_size)} differs from its note's size ${size}`);
  const stored = await db.selectFrom('checkpoints').selectAll().where('account_id', '=', accountId).where('tree_size', '=', size).executeTakeFirst();
  if (stored === undefined) refuse(`this ledger has no checkpoint of the account at size ${size}`);
  const at = `the one stored at size ${size}`;
  if (saved.root_hash !== undefined && saved.root_hash !== stored!.root_hash) refuse(`its root_hash differs from ${at}`);
  const savedNote = splitNote(saved.note);
  const storedNote = splitNote(stored!.note)!; // written by signNote: a body, a blank line, the log's signature
  if (savedNote === null || savedNote.body !== storedNote.body) refuse(`its note's signed text (the root) differs from ${at}`);
  const given = new Set(savedNote!.signatureLines);
  if (storedNote.signatureLines.some((line) => !given.has(line))) refuse(`its log signature differs from ${at}`);
  const cosignatures = await db.selectFrom('checkpoint_cosignatures').select('line')
    .where('account_id', '=', accountId).where('tree_size', '=', size).execute();
  const held = new Set([...storedNote.signatureLines, ...cosignatures.map((c) => c.line)]);
  const foreign = [...given].find((line) => !held.has(line));
  if (foreign !== undefined) refuse(`it carries a signature line this ledger does not hold (${JSON.stringify(foreign.slice(0, 60))}…)`);
  return stored!;
}
