import { sha256Hex } from './hash.js';
import { canonicalize } from './jcs.js';
import type { JsonValue } from './json.js';

export interface FingerprintInput {
  account_id: string;
  /** An HTTP token, already upper-cased by validateMethod. */
  method: string;
  /** A route that validateRoute accepted. */
  route: string;
  /** The command after the route's policy schema applied its defaults. */
  command: JsonValue;
}

/**
 * docs/formats.md#the-fingerprint: lowercase hex SHA-256 of JCS({account_id, command, method, route}).
 * Exactly these four members, whatever else the input object carries.
 */
export function fingerprint(input: FingerprintInput): string {
  const { account_id, method, route, command } = input;
  if (typeof account_id !== 'string' || typeof method !== 'string' || typeof route !== 'string') {
    throw new TypeError('fingerprint needs string account_id, method and route');
  }
  return sha256Hex(canonicalize({ account_id, command, method, route }));
}
