import type { AccountVerdict } from '../core/chain-verifier.js';

export interface VerifyReport {
  ok: boolean;
  accounts: AccountVerdict[];
}

export function buildReport(accounts: AccountVerdict[]): VerifyReport {
  return { ok: accounts.every((a) => a.first_bad_seq === null && a.reason === null), accounts };
}

/** One line per account; a tampered one is `account A: TAMPERED at seq N: reason` (docs/cli.md#gatehouse-verify). */
export function reportLines(report: VerifyReport): string[] {
  return report.accounts.map((a) => {
    const shredded = a.shredded ? '; shredded: its data key is destroyed, payloads are unreadable' : '';
    if (a.reason === null) return `account ${a.account_id}: intact (${a.events} events, ${a.checkpoints} checkpoints${shredded})`;
    const where = a.first_bad_seq === null ? 'TAMPERED' : `TAMPERED at seq ${a.first_bad_seq}`;
    return `account ${a.account_id}: ${where}: ${a.reason}`;
  });
}
