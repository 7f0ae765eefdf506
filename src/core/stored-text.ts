/**
 * Text the service keeps as text (keys, names, notes, ids, filters) never holds U+0000:
 * PostgreSQL's `text` cannot store it, so a NUL that reached a query failed there with a 500
 * while SQLite took it. It is refused at every way in (request bodies, query parameters, path
 * ids, forms, policy templates), on both stores alike, as the client's mistake. Commands and
 * responses are sealed as bytes, not text: a NUL inside them is kept like any character.
 */
export const NUL_PROBLEM = 'must not contain U+0000 (NUL)';

export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}
