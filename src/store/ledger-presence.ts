/**
 * Whether a ledger already exists at a store location, asked without creating anything:
 * opening the store runs the migrations, which would make a new, empty ledger wherever a
 * mistyped --data-dir or --db points (next to copied key files, a second ledger with its own
 * id). Verbs that only read or change an existing ledger ask this first.
 */
import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { StoreLocation } from './open-store.js';

/** A ledger is a database whose meta table holds a ledger id (written by the first open). */
export async function ledgerExists(location: StoreLocation): Promise<boolean> {
  return location.kind === 'sqlite' ? sqliteLedgerExists(location.file) : postgresLedgerExists(location.url);
}

/** Where the ledger was looked for, for a message: the file, or the URL without its password. */
export function describeLocation(location: StoreLocation): string {
  if (location.kind === 'sqlite') return location.file;
  try {
    const url = new URL(location.url);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'the PostgreSQL database';
  }
}

function sqliteLedgerExists(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  // Read-only and fileMustExist: asking must not create the file or its WAL.
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
    return meta !== undefined && db.prepare("SELECT 1 FROM meta WHERE key = 'ledger_id'").get() !== undefined;
  } finally {
    db.close();
  }
}

async function postgresLedgerExists(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined); // a dropped connection surfaces on the query
  await client.connect();
  try {
    const meta = await client.query("SELECT to_regclass('meta') IS NOT NULL AS present");
    if (meta.rows[0]?.present !== true) return false;
    return (await client.query("SELECT 1 FROM meta WHERE key = 'ledger_id'")).rows.length > 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}
