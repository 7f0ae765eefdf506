/**
 * The account's data key on the verify side: unwrapped once under the master key, then used
 * to check that every payload opens (docs/formats.md#payload-sealing). Both the verifier and the worker threads
 * that check slices of a large log (src/verify/sqlite-slice-worker.ts) use these, so both
 * accept exactly the same payloads. Importing this loads libsodium.
 */
import { SealError, openPayload, unwrapDataKey } from './seal.js';
import { loadSodium } from './sodium.js';

const sodium = await loadSodium();

/**
 * The data key, or null when there is nothing to open payloads with: no master key, or no
 * wrapped key (null: destroyed by shredding; undefined: not known to the reader).
 * 'does_not_unwrap' when the wrapped key does not open under the master key: a wrong master
 * key or an altered key row, which the verifier reports.
 */
export function unwrapAccountDataKey(
  masterKey: Uint8Array | undefined, accountId: string, wrapped: Uint8Array | null | undefined,
): Uint8Array | null | 'does_not_unwrap' {
  if (masterKey === undefined || !wrapped) return null;
  try {
    return unwrapDataKey(sodium, masterKey, accountId, wrapped);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return 'does_not_unwrap';
  }
}

/**
 * The data key for checkEventRow outside a ChainVerifier (a worker thread): unwrapped under the
 * master key, or null when there is no master key, no key (shredded or unknown) or it does not
 * unwrap — in that last case the caller must not take the fast path at all (the verifier
 * reports the key); ChainVerifier.acceptsCheckedSubtrees tells it.
 */
export function unwrapForFastPath(masterKey: Uint8Array | undefined, accountId: string, wrapped: Uint8Array | null | undefined): Uint8Array | null {
  const key = unwrapAccountDataKey(masterKey, accountId, wrapped);
  return key === 'does_not_unwrap' ? null : key;
}

/** Whether a sealed payload opens under the data key, bound to account and seq. */
export function payloadOpens(dataKey: Uint8Array, accountId: string, seq: number, payload: Uint8Array): boolean {
  try {
    openPayload(sodium, dataKey, accountId, seq, payload);
    return true;
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return false;
  }
}
