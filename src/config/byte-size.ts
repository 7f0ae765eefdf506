// Sizes as operators write them on the command line (serve --max-body, proxy --max-body/--max-response).

/** `1mb` style sizes for --max-body: k/kb = KiB, m/mb = MiB. */
export function parseByteSize(text: string): number {
  const match = /^(\d+)\s*(b|k|kb|m|mb|g|gb)?$/i.exec(text.trim());
  if (!match) throw new Error(`cannot read the size "${text}": use a number of bytes or a unit like 512kb or 1mb`);
  const unit = (match[2] ?? 'b').toLowerCase()[0];
  const factor = unit === 'g' ? 1024 ** 3 : unit === 'm' ? 1024 ** 2 : unit === 'k' ? 1024 : 1;
  return Number(match[1]) * factor;
}
