import crypto from 'node:crypto';
import { constantTimeEqual, sha256Hex } from '../core/hash.js';
import type { Store } from '../store/store.js';
import type { Clock } from '../core/time.js';
import type { WorkScope } from '../store/work-scope.js';
import { isRole, type Principal } from './roles.js';

/** An approver signs in for a working day at most; revoking the key ends the session at once. */
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export interface UiSession {
  idHash: string;
  principal: Principal;
  csrfToken: string;
  expiresAt: number;
}

/**
 * Server-side sessions for the approver pages. The cookie holds 256 random bits;
 * the database holds only their SHA-256, so a leaked table opens no session.
 */
export class UiSessions {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async create(principalId: string, workScope?: WorkScope): Promise<{ sessionId: string; csrfToken: string }> {
    const sessionId = crypto.randomBytes(32).toString('base64url');
    const csrfToken = crypto.randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.store.transact(async (trx) => {
      await trx.deleteFrom('ui_sessions').where('expires_at', '<=', now).execute();
      await trx.insertInto('ui_sessions').values({ id_hash: hashId(sessionId), principal_id: principalId, csrf_token: csrfToken, expires_at: now + SESSION_TTL_MS }).execute();
    }, { scope: workScope });
    return { sessionId, csrfToken };
  }

  /** The live session for a cookie value, with its principal; null when unknown, expired or the key was revoked. */
  async lookup(sessionId: string | undefined): Promise<UiSession | null> {
    // Untrusted input: only the shape we hand out is looked up.
    if (!sessionId || !/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return null;
    const idHash = hashId(sessionId);
    const row = await this.store.db.selectFrom('ui_sessions')
      .innerJoin('principals', 'principals.id', 'ui_sessions.principal_id')
      .select(['ui_sessions.id_hash', 'ui_sessions.csrf_token', 'ui_sessions.expires_at', 'principals.id', 'principals.account_id', 'principals.roles', 'principals.name', 'principals.revoked_at'])
      .where('ui_sessions.id_hash', '=', idHash).executeTakeFirst();
    if (!row || !constantTimeEqual(row.id_hash, idHash)) return null;
    if (Number(row.expires_at) <= this.clock.now() || row.revoked_at !== null) return null;
    const roles = (JSON.parse(row.roles) as string[]).filter(isRole);
    return {
      idHash, csrfToken: row.csrf_token, expiresAt: Number(row.expires_at),
      principal: { id: row.id, account_id: row.account_id, roles, name: row.name },
    };
  }

  async destroy(idHash: string, workScope?: WorkScope): Promise<void> {
    await this.store.transact((trx) => trx.deleteFrom('ui_sessions').where('id_hash', '=', idHash).execute(), { scope: workScope });
  }
}

export function hashId(sessionId: string): string {
  return sha256Hex(sessionId);
}
