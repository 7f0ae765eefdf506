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
 * The account has sealed payloads to answer for but no data key at all: the master key is
 * given and the ledger holds no entry for the account (no `accounts` row, no `data_keys`
 * member) — unlike a destroyed key (null: shredded). The service makes the key with the
 * account's first event and keeps its row after shredding, so a payload without one means the
 * entry was removed (docs/cli.md#gatehouse-verify): every payload is refused (REFUSES_EVERY_PAYLOAD),
 * and the verifier names it at the first event that carries one. An account with no payload
 * is not affected.
 */
export const NO_DATA_KEY = 'no_data_key';

/**
 * The data key, or null when there is nothing to open payloads with: no master key, or a key
 * destroyed by shredding (null). NO_DATA_KEY when the master key is given but the ledger holds
 * no key for the account (undefined). 'does_not_unwrap' when the wrapped key does not open
 * under the master key: a wrong master key or an altered key row, which the verifier reports.
 */
export function unwrapAccountDataKey(
  masterKey: MasterKey | undefined, accountId: string, wrapped: Uint8Array | null | undefined,
): DataKey | null | typeof NO_DATA_KEY | 'does_not_unwrap' {
  if (masterKey === undefined || wrapped === null) return null;
  if (wrapped === undefined) return NO_DATA_KEY;
  try {
    return { bytes: unwrapDataKey(masterKey.sodium, masterKey.bytes, accountId, wrapped), sodium: masterKey.sodium };
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return 'does_not_unwrap';
  }
}

/**
 * The data key for checkEventRow outside a ChainVerifier (a worker thread): unwrapped under the
 * master key, NO_DATA_KEY when there is none to open payloads with that must open (the slices
 * then refuse every payload: payloadCheck), or null when there is no master key, the key is
 * shredded or it does not unwrap — in that last case the caller must not take the fast path
 * at all (the verifier reports the key); ChainVerifier.acceptsCheckedSubtrees tells it.
 */
export function unwrapForFastPath(
  masterKey: MasterKey | undefined, accountId: string, wrapped: Uint8Array | null | undefined,
): DataKey | typeof NO_DATA_KEY | null {
  const key = unwrapAccountDataKey(masterKey, accountId, wrapped);
  return key === 'does_not_unwrap' ? null : key;
}

/** Whether one account's sealed payload opens under its data key, bound to account and seq. */
export type Opens = (seq: number, payload: Uint8Array) => boolean;

/**
 * The payload check of an account with NO_DATA_KEY: no payload opens, so the fast paths hand
 * the first event that carries one to the reference path, which names it. Rows without a
 * payload never call it: an account that never sealed one costs nothing more.
 */
export const REFUSES_EVERY_PAYLOAD: Opens = () => false;

/** The payload check for a key as unwrapForFastPath gives it: null when payloads are not opened. */
export function payloadCheck(key: DataKey | typeof NO_DATA_KEY | null, accountId: string): Opens | null {
  if (key === null) return null;
  return key === NO_DATA_KEY ? REFUSES_EVERY_PAYLOAD : payloadOpener(key, accountId);
}

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
