import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';

/**
 * Stored witness cosignature lines appended to the notes of the checkpoints they cosign, as the
 * API serves them (a database from before witnesses has no such table: then there are none).
 */
export function withCosignatureLines(checkpoints: VerifierCheckpoint[], lines: ReadonlyArray<{ tree_size: number | string; line: string }>): VerifierCheckpoint[] {
  if (lines.length === 0) return checkpoints;
  const bySize = new Map<number, string[]>();
  for (const { tree_size, line } of lines) {
    const list = bySize.get(Number(tree_size)) ?? [];
    list.push(line);
    bySize.set(Number(tree_size), list);
  }
  return checkpoints.map((c) => {
    const extra = bySize.get(Number(c.tree_size));
    return extra === undefined ? c : { ...c, note: c.note + extra.map((l) => `${l}\n`).join('') };
  });
}
