/**
 * The account's data key on the verify side: unwrapped once under the master key, then used
 * to check that every payload opens (docs/formats.md#payload-sealing). Both the verifier and the worker threads
 * that check slices of a large log (src/verify/sqlite-slice-worker.ts) use these, so both
 * accept exactly the same payloads.
 *
 * libsodium comes in with the master key (as seal.ts takes it): a verify run without
 * --master-key opens no payload and never loads it, which takes its ~50 ms load off the start
 * of every such run (BENCHMARKS.md, eighteenth session).
 */
import { SealError, openPayload, unwrapDataKey } from './seal.js';
import type { Sodium } from './sodium.js';

/** A master key to open payloads with, and the libsodium that opens them. */
export interface MasterKey {
  bytes: Uint8Array;
  sodium: Sodium;
}

/** An account's data key, unwrapped, and the libsodium that opens its payloads. */
export interface DataKey {
  bytes: Uint8Array;
  sodium: Sodium;
}

/**
 * Key bytes with libsodium loaded for them: a master key the caller read (MasterKey), or a
 * data key a worker thread was given (DataKey).
 */
export async function withSodium(bytes: Uint8Array): Promise<MasterKey & DataKey> {
  const { loadSodium } = await import('./sodium.js');
  return { bytes, sodium: await loadSodium() };
}

/**
 * The data key, or null when there is nothing to open payloads with: no master key, or no
 * wrapped key (null: destroyed by shredding; undefined: not known to the reader).
 * 'does_not_unwrap' when the wrapped key does not open under the master key: a wrong master
 * key or an altered key row, which the verifier reports.
 */
export function unwrapAccountDataKey(
  masterKey: MasterKey | undefined, accountId: string, wrapped: Uint8Array | null | undefined,
): DataKey | null | 'does_not_unwrap' {
  if (masterKey === undefined || !wrapped) return null;
  try {
    return { bytes: unwrapDataKey(masterKey.sodium, masterKey.bytes, accountId, wrapped), sodium: masterKey.sodium };
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
export function unwrapForFastPath(masterKey: MasterKey | undefined, accountId: string, wrapped: Uint8Array | null | undefined): DataKey | null {
  const key = unwrapAccountDataKey(masterKey, accountId, wrapped);
  return key === 'does_not_unwrap' ? null : key;
}

/** Whether one account's sealed payload opens under its data key, bound to account and seq. */
export type Opens = (seq: number, payload: Uint8Array) => boolean;

/** The payload check of one account whose data key is known. */
export function payloadOpener(dataKey: DataKey, accountId: string): Opens {
  const { bytes, sodium } = dataKey;
  return (seq, payload) => {
    try {
      openPayload(sodium, bytes, accountId, seq, payload);
      return true;
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      return false;
    }
  };
}
