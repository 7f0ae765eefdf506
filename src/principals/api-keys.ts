import crypto from 'node:crypto';
import { sha256Hex } from '../core/hash.js';

const KEY_PREFIX = 'gh_';
const KEY_PATTERN = /^gh_[A-Za-z0-9_-]{43}$/;

/** `gh_` + 256 random bits in base64url: the prefix lets secret scanners find leaked keys. */
export function generateApiKey(): string {
  return KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
}

/** Keys carry 256 random bits, so a plain SHA-256 is enough to keep them unusable at rest. */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export function looksLikeApiKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}
