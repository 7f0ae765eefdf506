/**
 * `gatehouse verify-evidence FILE`: checks an evidence file offline with src/core (and the
 * option checks it shares with verify, src/verify/witness-policy.ts) — no server, no
 * database, no data dir. Exit 0 valid, 1 invalid (`evidence: INVALID: reason`),
 * 2 usage or I/O error.
 */
import type { Argv, CommandModule } from 'yargs';
import { EXIT_UNREADABLE, VerifyInputError } from '../../src/verify/errors.js';
import { witnessKeyOptions } from '../output.js';

interface VerifyEvidenceArgs {
  file: string;
  keys?: string;
  'public-key'?: string;
  'witness-key'?: string[];
  'min-witnesses'?: number;
  json: boolean;
}

export const verifyEvidenceCommand: CommandModule<object, VerifyEvidenceArgs> = {
  command: 'verify-evidence <file>',
  describe: 'check an evidence file offline: event hash, payload, inclusion proof, checkpoint signature, witnesses (exit 0 valid, 1 invalid, 2 unreadable)',
  builder: (y) => y
    .positional('file', { type: 'string', demandOption: true, describe: 'an evidence file written by gatehouse prove' })
    .options({
      keys: { type: 'string', describe: 'trusted log keys: a file with the JSON of GET /v1/keys' },
      'public-key': { type: 'string', describe: 'trusted log key: a note verifier key or a base64 Ed25519 public key' },
      ...witnessKeyOptions,
      json: { type: 'boolean', default: false, describe: 'machine-readable output' },
    }) as unknown as Argv<VerifyEvidenceArgs>,
  handler: async (args) => {
    process.exitCode = await run(args);
  },
};

async function run(args: VerifyEvidenceArgs): Promise<number> {
  const [{ verifyEvidence }, { logKeyFrom }, { witnessPolicy }, { SigningKeyError }, { readEvidenceFile }, { keysFromFile }] = await Promise.all([
    import('../../src/core/evidence.js'), import('../../src/core/log-keys.js'), import('../../src/verify/witness-policy.js'), import('../../src/core/signing-key.js'),
    import('../evidence-input.js'), import('../../src/verify/trust.js'),
  ]);
  try {
    if (args.keys !== undefined && args['public-key'] !== undefined) throw new VerifyInputError('give --keys or --public-key, not both');
    // The check verify makes of the same options: the two never accept different quorums.
    const witnesses = witnessPolicy(args['witness-key'] ?? [], args['min-witnesses']);
    const { evidence, altered } = readEvidenceFile(args.file);
    const ledgerId = typeof (evidence as { ledger_id?: unknown } | null)?.ledger_id === 'string' ? (evidence as { ledger_id: string }).ledger_id : '';
    const trustedKeys = args['public-key'] !== undefined
      ? [logKeyFrom(args['public-key'], ledgerId)]
      // Read as verify reads it: one reader of a pinned-keys file, one way of refusing it.
      : args.keys !== undefined ? keysFromFile(args.keys, ledgerId) : null;
    if (trustedKeys === null) {
      process.stderr.write('gatehouse verify-evidence: warning: trusting the keys listed in the evidence file itself; they are not pinned (pass --keys or --public-key with the key you saved from GET /v1/keys)\n');
    }
    const verdict = altered !== null
      ? { ok: false as const, reason: altered }
      : verifyEvidence(evidence, { trustedKeys, witnesses: witnesses?.keys ?? [], minWitnesses: witnesses?.min ?? 0 });
    if (args.json) process.stdout.write(JSON.stringify(verdict) + '\n');
    else if (verdict.ok) {
      process.stdout.write(`evidence: VALID: event ${verdict.seq} of account ${verdict.account_id} is in the signed checkpoint of size ${verdict.tree_size}` +
        `${witnesses !== null ? ` with ${verdict.cosignatures} valid witness cosignature${verdict.cosignatures === 1 ? '' : 's'}` : ''}\n`);
    } else process.stdout.write(`evidence: INVALID: ${verdict.reason}\n`);
    return verdict.ok ? 0 : 1;
  } catch (error) {
    if (error instanceof VerifyInputError || error instanceof SigningKeyError) {
      process.stderr.write(`gatehouse verify-evidence: ${error.message}\n`);
      return EXIT_UNREADABLE;
    }
    throw error;
  }
}
