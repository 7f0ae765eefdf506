import { randomBytes } from './random.js';

// Crockford's base32 in lower case: its digits sort in ASCII order, so ids sort by time.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10; // 50 bits: milliseconds until the year 37,000
const RANDOM_BYTES = 13; // 104 bits, 21 characters (the last one carries 4 of the 5 bits)

/**
 * `<prefix>_` + the creation time in milliseconds + 104 random bits, in an alphabet that sorts
 * as it counts. A time-ordered id lands at the right-hand end of every index that holds it
 * (the operations primary key, events by operation), so a batch of claims dirties a few
 * b-tree pages instead of one random page per index per claim — which every group commit
 * then writes whole to the WAL. Ids are names, not secrets: nothing is authorised by
 * knowing one, so the time in them gives nothing away that `created_at` does not.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  let time = '';
  let rest = Math.max(0, Math.floor(nowMs));
  for (let i = 0; i < TIME_CHARS; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return `${prefix}_${time}${base32(randomBytes(RANDOM_BYTES))}`;
}

function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}
