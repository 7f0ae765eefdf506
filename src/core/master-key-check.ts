import crypto from 'node:crypto';

/**
 * The check value a ledger records in its meta table (`master_key_check`) on first open: an
 * HMAC-SHA256 of a fixed label under the master key, so a key can be recognised as the
 * ledger's without storing anything that reveals it. The service refuses to start with
 * another key; `gatehouse verify --master-key` refuses it as a usage error, rather than
 * calling every account's key row tampered.
 */
export function masterKeyCheck(masterKey: Uint8Array): string {
  return crypto.createHmac('sha256', masterKey).update('gatehouse:master-key-check').digest('hex');
}

/** Whether `masterKey` is the one whose check value was recorded (compared in constant time). */
export function matchesMasterKeyCheck(masterKey: Uint8Array, recorded: string): boolean {
  const expected = Buffer.from(masterKeyCheck(masterKey), 'utf8');
  const given = Buffer.from(recorded, 'utf8');
  return expected.length === given.length && crypto.timingSafeEqual(expected, given);
}
