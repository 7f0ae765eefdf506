import type { AccountVerdict } from '../core/chain-verifier.js';

export interface VerifyReport {
  ok: boolean;
  accounts: Array<Omit<AccountVerdict, 'warnings'>>;
  /**
   * Findings that are not tampering and do not change the exit code, each naming its account.
   * Present only when there are some: a clean report keeps the contract's shape exactly.
   */
  warnings?: string[];
}

export function buildReport(verdicts: AccountVerdict[]): VerifyReport {
  const warnings = verdicts.flatMap((a) => a.warnings.map((w) => `account ${a.account_id}: ${w}`));
  return {
    ok: verdicts.every((a) => a.first_bad_seq === null && a.reason === null),
    accounts: verdicts.map(({ warnings: _, ...verdict }) => verdict),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
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
