/** What verify reads from a database's meta table: the ledger id and the master key's check value. */
export interface LedgerMeta {
  ledgerId: string | null;
  masterKeyCheck: string | null;
}

/** From `SELECT key, value FROM meta` rows; untrusted input: a value that is not a string counts as absent. */
export function ledgerMeta(rows: ReadonlyArray<{ key: string; value: unknown }>): LedgerMeta {
  const value = (key: string): string | null => {
    const found = rows.find((row) => row.key === key)?.value;
    return typeof found === 'string' ? found : null;
  };
  return { ledgerId: value('ledger_id'), masterKeyCheck: value('master_key_check') };
}
