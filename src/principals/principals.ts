import type { Db, Store } from '../store/store.js';
import type { Clock } from '../core/time.js';
import { monotonicClock, rfc3339 } from '../core/time.js';
import { InvariantError } from '../core/errors.js';
import { constantTimeEqual } from '../core/hash.js';
import { newId } from '../core/ids.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-keys.js';
import type { WorkScope } from '../store/work-scope.js';
import { isRole, type Principal, type Role } from './roles.js';

/** Other instances see a revocation within this long: it bounds how stale the key cache may be. */
const CACHE_TTL_MS = 4000;

export interface CreatedPrincipal {
  principal: Principal;
  key: string;
}

export interface PrincipalRecord extends Principal {
  created_at: string;
  revoked_at: string | null;
}

export class Principals {
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  /**
   * `cacheClock` times the key cache: monotonic, so a wall clock stepped back cannot keep a
   * revoked key's entry alive for the size of the step.
   */
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly cacheClock: Clock = monotonicClock) {}

  async create(input: { account_id: string; roles: Role[]; name?: string | null }, workScope?: WorkScope): Promise<CreatedPrincipal> {
    const key = generateApiKey();
    const principal: Principal = { id: newId('prn'), account_id: input.account_id, roles: [...new Set(input.roles)], name: input.name ?? null };
    await this.store.transact((trx) => insertPrincipal(trx, principal, hashApiKey(key), rfc3339(this.clock.now())), { scope: workScope });
    return { principal, key };
  }

  /**
   * Creates the principal unless another instance already made the first admin: instances
   * starting at once on one database race here, and the `meta` row's primary key decides.
   */
  async createFirst(input: { account_id: string; roles: Role[]; name?: string | null }): Promise<CreatedPrincipal | null> {
    const key = generateApiKey();
    const principal: Principal = { id: newId('prn'), account_id: input.account_id, roles: [...new Set(input.roles)], name: input.name ?? null };
    const created = await this.store.transact(async (trx) => {
      const claimed = await trx.insertInto('meta').values({ key: 'first_admin', value: principal.id })
        .onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst();
      if (claimed) await insertPrincipal(trx, principal, hashApiKey(key), rfc3339(this.clock.now()));
      return claimed !== undefined;
    });
    return created ? { principal, key } : null;
  }

  async list(): Promise<PrincipalRecord[]> {
    const rows = await this.store.db.selectFrom('principals').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => ({ ...toPrincipal(row), created_at: row.created_at, revoked_at: row.revoked_at }));
  }

  async revoke(id: string): Promise<boolean> {
    const result = await this.store.transact((trx) =>
      trx.updateTable('principals').set({ revoked_at: rfc3339(this.clock.now()) })
        .where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst(),
    );
    this.cache.clear();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Resolves a bearer key to its principal; null for an unknown or revoked key. */
  async authenticate(key: string): Promise<Principal | null> {
    if (!looksLikeApiKey(key)) return null;
    const keyHash = hashApiKey(key);
    const now = this.cacheClock.now();
    const cached = this.cache.get(keyHash);
    if (cached && cached.until > now) return cached.principal;
    const row = await this.store.db.selectFrom('principals').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    const principal = row && row.revoked_at === null && constantTimeEqual(row.key_hash, keyHash) ? toPrincipal(row) : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(keyHash, { principal, until: now + CACHE_TTL_MS });
    return principal;
  }
}

async function insertPrincipal(trx: Db, principal: Principal, keyHash: string, now: string): Promise<void> {
  await trx.insertInto('principals').values({
    id: principal.id,
    account_id: principal.account_id,
    name: principal.name,
    roles: JSON.stringify(principal.roles),
    key_hash: keyHash,
    created_at: now,
    revoked_at: null,
  }).execute();
}

function toPrincipal(row: { id: string; account_id: string; name: string | null; roles: string }): Principal {
  const roles = JSON.parse(row.roles) as string[];
  if (!roles.every(isRole)) throw new InvariantError(`principal ${row.id} has an unknown role`);
  return { id: row.id, account_id: row.account_id, roles, name: row.name };
}
