/**
 * The reference path's checks of one event's content (docs/formats.md#events), each failure named: the
 * account, the link to the previous event, the header hash, the payload hash and, with the
 * account's data key, that the payload opens. Check 1, seq continuity, is ChainVerifier's,
 * which owns the chain's position. checkEventRow (event-hash.ts) is the fast path over the
 * same checks; it only says whether all of them pass.
 */
import type { Opens } from './account-data-key.js';
import { eventHash } from './event-hash.js';
import { type EventHeader, HEX64 } from './event-shape.js';
import type { FirstFailure } from './first-failure.js';
import { sha256Digest } from './merkle.js';

export class EventChecks {
  readonly #accountId: string;
  readonly #opens: Opens | null;
  readonly #failures: FirstFailure;
  readonly #noDataKey: boolean;

  /**
   * `opens`: null when payloads cannot be opened (no master key, shredded, no data key, or the
   * key failed). `noDataKey`: payloads must open but the account has no data key at all
   * (account-data-key.ts NO_DATA_KEY): every event that carries one is a failure.
   */
  constructor(accountId: string, opens: Opens | null, failures: FirstFailure, noDataKey = false) {
    this.#accountId = accountId;
    this.#opens = opens;
    this.#failures = failures;
    this.#noDataKey = noDataKey;
  }

  /**
   * Checks 2 to 6 of an event whose header is well-formed (headerProblem) and whose seq is the
   * one the chain expects; `prevHash` is the hash the chain has reached. Reports each failure
   * and returns the hash the chain advances with (chainedHash).
   */
  check(header: EventHeader, hash: string, payload: Uint8Array | null | undefined, prevHash: string): string {
    const seq = header.seq;
    const failures = this.#failures;
    // 2. account
    if (header.account_id !== this.#accountId) {
      failures.report(seq, `event ${seq}: account_id is ${JSON.stringify(header.account_id)}, not ${JSON.stringify(this.#accountId)}`);
    }
    // 3. link
    if (header.prev_hash !== prevHash) {
      failures.report(seq, `event ${seq}: prev_hash does not link to the hash of event ${seq - 1 === 0 ? '0 (genesis)' : seq - 1}`);
    }
    // 4. hash
    let recomputed: string | null = null;
    try {
      recomputed = eventHash(header);
    } catch (err) {
      // canonicalize refuses what JCS cannot represent (a lone surrogate)
      failures.report(seq, `event ${seq}: malformed header: ${(err as Error).message}`);
    }
    // equal to the recomputed hash means well-formed: the regex only runs when they differ
    const storedHashOk = (recomputed !== null && recomputed === hash) || isHashHex(hash);
    if (!storedHashOk) {
      failures.report(seq, `event ${seq}: stored hash is not 64 lowercase hex digits`);
    } else if (recomputed !== null && recomputed !== hash) {
      failures.report(seq, `event ${seq}: header does not hash to the stored hash (header altered)`);
    }
    // 5. payload hash
    if (payload === null || payload === undefined) {
      if (header.payload_hash !== null) failures.report(seq, `event ${seq}: payload is missing but the header has a payload_hash`);
    } else if (this.#noDataKey) {
      // 6. without a key no payload can open: reported first, whatever its hash says
      failures.report(seq, `event ${seq}: the account has sealed payloads but no data key (its key row or data_keys entry was removed)`);
    } else if (header.payload_hash === null) {
      failures.report(seq, `event ${seq}: a payload is stored but the header has no payload_hash`);
    } else if (sha256Digest('sha256', payload, 'hex') !== header.payload_hash) {
      failures.report(seq, `event ${seq}: payload does not match payload_hash (payload altered)`);
    } else if (this.#opens !== null && !this.#opens(seq, payload)) {
      // 6. the payload opens under the account's data key, bound to account and seq
      failures.report(seq, `event ${seq}: payload matches its hash but does not decrypt under the account's data key`);
    }
    return chainedHash(hash, recomputed, storedHashOk);
  }
}

/**
 * The hash the chain advances with after an event, checked or not. What the log claims, since
 * checkpoints were signed over the stored hashes; an unusable stored hash is replaced by the
 * recomputed one, or by a stand-in so the tree keeps its shape (that event is already reported).
 */
export function chainedHash(hash: string, recomputed: string | null, storedHashOk = isHashHex(hash)): string {
  return storedHashOk ? hash : (recomputed ?? sha256Digest('sha256', String(hash), 'hex'));
}

/** Untrusted: the stored hash may be anything a reader found. */
function isHashHex(hash: unknown): boolean {
  return typeof hash === 'string' && HEX64.test(hash);
}
