/**
 * pg's type parsers with int8 (seq, sizes, epoch ms) read as a JS number, for one pool or
 * client only: pg.types.setTypeParser would change every pg user in the process. Every value
 * Gatehouse stores in an int8 is below 2^53; a larger one is refused rather than rounded.
 */
import pg from 'pg';

function int8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} exceeds 2^53`);
  return value;
}

/** The `types` option of a pg.Pool or pg.Client. */
export const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary' ? int8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};
