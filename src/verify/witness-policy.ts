/**
 * `--witness-key KEY … --min-witnesses N` (verify and verify-evidence): the newest checkpoint
 * of each account must carry N valid cosignatures by distinct trusted witnesses. A log rolled
 * back, or a fork shown to one auditor, has checkpoints the witnesses never cosigned.
 */
import { type CosignerKey, checkCosignatures, parseCosignerVerifier } from '../core/cosignature.js';
import { SigningKeyError } from '../core/signing-key.js';
import { VerifyInputError } from './errors.js';

export interface WitnessPolicy {
  keys: CosignerKey[];
  min: number;
}

/**
 * Null when no witness is required; throws VerifyInputError on bad options. A quorum of 0 is
 * refused, with or without keys: it would let a checkpoint no witness saw pass, while the
 * command line reads as if witnesses were asked for.
 */
export function witnessPolicy(keyTexts: readonly string[], min: number | undefined): WitnessPolicy | null {
  if (keyTexts.length === 0) {
    if (min !== undefined) throw new VerifyInputError('--min-witnesses needs the witnesses\' keys: give --witness-key KEY for each');
    return null;
  }
  const keys = keyTexts.map((text) => {
    try {
      return parseCosignerVerifier(text);
    } catch (error) {
      if (error instanceof SigningKeyError) throw new VerifyInputError(`--witness-key: ${error.message}`);
      throw error;
    }
  });
  const n = min ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > keys.length) {
    throw new VerifyInputError(`--min-witnesses must be a whole number from 1 to ${keys.length} (the --witness-key values given), not ${n}`);
  }
  return { keys, min: n };
}

/** Why a checkpoint note falls short of the policy, or null when it meets it. */
export function witnessShortfall(note: string, policy: WitnessPolicy): string | null {
  const { valid, invalid } = checkCosignatures(note, policy.keys);
  if (valid.length >= policy.min) return null;
  const bad = invalid.length > 0 ? ` (${invalid.length} present but invalid)` : '';
  return `${valid.length} valid witness cosignature${valid.length === 1 ? '' : 's'}${bad}, ${policy.min} required`;
}
