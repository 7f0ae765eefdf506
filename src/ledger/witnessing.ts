/**
 * `gatehouse serve --witness URL=KEY …`: every new checkpoint goes to every witness (C2SP
 * tlog-witness) with the consistency proof from the size that witness last cosigned, and the
 * cosignature that comes back is stored beside the checkpoint.
 *
 * Off the request path entirely: each witness has its own loop that looks for checkpoints it
 * has not cosigned, so a claim never waits for a witness and a slow or dead witness delays
 * nothing but its own cosignature (it is retried with backoff, and catches up from the size it
 * last cosigned once it is back). Every checkpoint goes, oldest first, not only an account's
 * newest: an auditor may have saved any of them (`prove --checkpoint`), and evidence bound to one
 * no witness saw could never meet `--min-witnesses`. A 409 names the size the witness holds; the
 * proof is then built from that size. A witness that holds a size beyond this log's (the log was
 * rolled back) or refuses the proof (the log forked) is reported, never "fixed".
 *
 * A clean stop ends with one last pass (`stop`), after the service signed its final checkpoints,
 * so that a stopped service's newest checkpoints are cosigned and `verify --witness-key` passes
 * on its database; a witness that is down then costs the stop at most FINAL_PASS_MS.
 */
import type { Logger } from 'pino';
import { checkCosignatures, type CosignerKey } from '../core/cosignature.js';
import { rfc3339, type Clock } from '../core/time.js';
import { formatAddCheckpoint } from '../core/tlog-witness.js';
import type { Store } from '../store/store.js';
import type { Ledger } from './ledger.js';
import { storeCosignature } from './cosignatures.js';
import { consistencyProofOf } from './proofs.js';

export interface WitnessTarget {
  /** The submission prefix: POST <url>/add-checkpoint. */
  url: string;
  key: CosignerKey;
}

interface Deps {
  store: Store;
  ledger: Ledger;
  logger: Logger;
  clock: Clock;
}

const POLL_MS = 500;
const MAX_BACKOFF_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
const QUORUM_GRACE_MS = 60_000;
/** The longest a clean stop waits for the witnesses to cosign the checkpoints signed at the stop. */
export const FINAL_PASS_MS = 3_000;

class WitnessRefused extends Error {}

export class Witnessing {
  readonly #deps: Deps;
  readonly #targets: WitnessTarget[];
  readonly #quorum: number;
  #stopped = false;
  /** Aborted by `stop`: a submission in flight is dropped (the final pass makes it again). */
  readonly #running = new AbortController();
  readonly #loops: Promise<void>[] = [];
  readonly #wake = new Set<() => void>();
  readonly #warned = new Set<string>();
  /** Per witness (its key text), per account behind: when its oldest checkpoint not cosigned was made (ms). */
  readonly #behindSince = new Map<string, Map<string, number>>();

  constructor(deps: Deps, targets: WitnessTarget[], quorum: number) {
    this.#deps = deps;
    this.#targets = targets;
    this.#quorum = quorum;
  }

  /** Checkpoints every chain that grew past its newest checkpoint, then starts one loop per witness. */
  async start(): Promise<void> {
    await this.#deps.ledger.checkpointGrownChains();
    for (const target of this.#targets) this.#loops.push(this.#loop(target));
    this.#loops.push(this.#quorumWatch());
  }

  /**
   * Per witness, in seconds, how long the oldest checkpoint it has not cosigned (of any account,
   * above the newest one it did cosign) has waited: 0 when it holds every account's newest. Not
   * the newest checkpoint's age: one is signed every 10 s while events arrive, so a witness that
   * is down would never look more than 10 s behind. As of the witness's last pass (every 0.5 s,
   * backing off to 10 s while it fails). For GET /metrics.
   */
  lag(): Array<{ witness: string; seconds: number }> {
    const now = this.#deps.clock.now();
    return this.#targets.map((target) => {
      const since = [...(this.#behindSince.get(target.key.text)?.values() ?? [])];
      return { witness: target.key.name, seconds: since.length === 0 ? 0 : Math.max(0, now - Math.min(...since)) / 1000 };
    });
  }

  /**
   * Stops the loops, then makes one last pass per witness, for at most `finalPassMs`: called once
   * the service has signed its final checkpoints, it gets them cosigned. A witness that refuses or
   * does not answer in time is logged, as in the loop, and the stop goes on.
   */
  async stop(finalPassMs = FINAL_PASS_MS): Promise<void> {
    this.#stopped = true;
    this.#running.abort();
    for (const wake of this.#wake) wake();
    await Promise.all(this.#loops);
    if (finalPassMs <= 0) return;
    const deadline = AbortSignal.timeout(finalPassMs);
    await Promise.all(this.#targets.map((target) => this.#submitPending(target, deadline).catch((err) => this.#report(target, err))));
  }

  async #sleep(ms: number): Promise<void> {
    if (this.#stopped) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake.add(done);
    });
  }

  async #loop(target: WitnessTarget): Promise<void> {
    let backoff = POLL_MS;
    while (!this.#stopped) {
      try {
        await this.#submitPending(target, this.#running.signal);
        backoff = POLL_MS;
      } catch (err) {
        if (this.#stopped) return;
        this.#report(target, err);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
      await this.#sleep(backoff);
    }
  }

  #report(target: WitnessTarget, err: unknown): void {
    const level = err instanceof WitnessRefused ? 'error' : 'warn';
    this.#deps.logger[level]({ witness: target.key.name, url: target.url, err: (err as Error).message }, 'witness did not cosign');
  }

  /** Every checkpoint above the newest one this witness cosigned, per account, oldest first; until `signal` aborts. */
  async #submitPending(target: WitnessTarget, signal: AbortSignal): Promise<void> {
    const db = this.#deps.store.db;
    const newest = await db.selectFrom('checkpoints').select(['account_id', (eb) => eb.fn.max('tree_size').as('size')]).groupBy('account_id').execute();
    const cosigned = await db.selectFrom('checkpoint_cosignatures').select(['account_id', (eb) => eb.fn.max('tree_size').as('size')])
      .where('witness', '=', target.key.text).groupBy('account_id').execute();
    const last = new Map(cosigned.map((r) => [r.account_id, Number(r.size)]));
    const behind = newest.filter(({ account_id: accountId, size }) => (last.get(accountId) ?? 0) < Number(size));
    const pending = new Map<string, Array<{ size: number; createdAt: number }>>();
    for (const { account_id: accountId } of behind) {
      const rows = await db.selectFrom('checkpoints').select(['tree_size', 'created_at'])
        .where('account_id', '=', accountId).where('tree_size', '>', last.get(accountId) ?? 0).orderBy('tree_size').execute();
      pending.set(accountId, rows.map((r) => ({ size: Number(r.tree_size), createdAt: Date.parse(r.created_at) })));
    }
    // Noted before submitting (a witness that is down fails the first submission), and moved on as each is cosigned.
    const since = new Map([...pending].filter(([, rows]) => rows.length > 0).map(([accountId, rows]) => [accountId, rows[0]!.createdAt]));
    this.#behindSince.set(target.key.text, since);
    for (const [accountId, rows] of pending) {
      let cosignedSize = last.get(accountId) ?? 0;
      for (const [i, { size }] of rows.entries()) {
        if (signal.aborted) return;
        await this.#submit(target, accountId, size, cosignedSize, signal);
        cosignedSize = size;
        const next = rows[i + 1];
        if (next) since.set(accountId, next.createdAt);
        else since.delete(accountId);
      }
    }
  }

  async #submit(target: WitnessTarget, accountId: string, size: number, lastCosigned: number, signal: AbortSignal): Promise<void> {
    const { store, clock } = this.#deps;
    const checkpoint = await store.db.selectFrom('checkpoints').selectAll()
      .where('account_id', '=', accountId).where('tree_size', '=', size).executeTakeFirstOrThrow();
    let old = lastCosigned;
    const tried = new Set<number>();
    for (;;) {
      if (old > size) {
        throw new WitnessRefused(`it has cosigned ${old} events of account ${accountId}, more than this log's checkpoint of ${size}: the log was rolled back`);
      }
      tried.add(old);
      const proof = await consistencyProofOf(store.db, accountId, old, size);
      const body = formatAddCheckpoint(old, proof.hashes.map((h) => Buffer.from(h, 'hex')), checkpoint.note);
      const response = await fetch(`${target.url.replace(/\/+$/, '')}/add-checkpoint`, {
        method: 'POST', body, headers: { 'content-type': 'text/plain; charset=utf-8' }, signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      });
      const text = await response.text();
      if (response.status === 409) {
        const held = /^(0|[1-9][0-9]{0,15})\n$/.exec(text);
        if (held === null) throw new Error(`409 without a size (${JSON.stringify(text.slice(0, 80))})`);
        const next = Number(held[1]);
        // Its size is the one to prove from; one it already refused means it holds another root there.
        if (tried.has(next)) throw new WitnessRefused(`it holds another checkpoint at size ${next} of account ${accountId}: the log forked`);
        old = next;
        continue;
      }
      if (response.status === 422) throw new WitnessRefused(`the checkpoint of account ${accountId} at size ${size} is not consistent with the one it cosigned at size ${old}: the log forked or was rolled back`);
      if (response.status !== 200) throw new Error(`HTTP ${response.status} ${text.slice(0, 200).trim()}`);
      const line = text.split('\n').find((l) => l !== '' && checkCosignatures(`${checkpoint.note}${l}\n`, [target.key]).valid.length === 1);
      if (line === undefined) throw new WitnessRefused('its answer holds no valid cosignature by its key');
      await store.transact((trx) => storeCosignature(trx, {
        account_id: accountId, tree_size: size, witness: target.key.text, line, created_at: rfc3339(clock.now()),
      }));
      return;
    }
  }

  /** Says so (once per checkpoint) when an account's newest checkpoint stays below the quorum. */
  async #quorumWatch(): Promise<void> {
    while (!this.#stopped) {
      await this.#sleep(QUORUM_GRACE_MS / 6);
      if (this.#stopped) return;
      try {
        const db = this.#deps.store.db;
        const newest = await db.selectFrom('checkpoints as c').select(['c.account_id', 'c.tree_size', 'c.created_at'])
          .where('c.tree_size', '=', (eb) => eb.selectFrom('checkpoints as d').select((e) => e.fn.max('d.tree_size').as('m')).whereRef('d.account_id', '=', 'c.account_id'))
          .execute();
        for (const cp of newest) {
          if (this.#deps.clock.now() - Date.parse(cp.created_at) < QUORUM_GRACE_MS) continue;
          const id = `${cp.account_id}/${cp.tree_size}`;
          if (this.#warned.has(id)) continue;
          const count = await db.selectFrom('checkpoint_cosignatures').select((eb) => eb.fn.countAll().as('n'))
            .where('account_id', '=', cp.account_id).where('tree_size', '=', cp.tree_size).executeTakeFirst();
          if (Number(count?.n ?? 0) < this.#quorum) {
            this.#warned.add(id);
            this.#deps.logger.warn({ account_id: cp.account_id, tree_size: Number(cp.tree_size), cosignatures: Number(count?.n ?? 0), quorum: this.#quorum },
              'newest checkpoint is below the witness quorum');
          }
        }
      } catch (err) {
        this.#deps.logger.warn({ err }, 'witness quorum check failed');
      }
    }
  }
}
