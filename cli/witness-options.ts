import { SigningKeyError } from '../src/core/signing-key.js';
import { parseCosignerVerifier, type CosignerKey } from '../src/core/cosignature.js';
import { UsageError } from './output.js';

/** `--witness URL=VERIFIER_KEY …` and `--witness-quorum N` of serve. */
export function parseWitnessOptions(specs: string[], quorum: number | undefined): { targets: Array<{ url: string; key: CosignerKey }>; quorum: number } {
  const targets = specs.map((spec) => {
    const eq = spec.indexOf('=');
    // C2SP names the witness by its submission prefix (the log POSTs to <prefix>/add-checkpoint), but
    // an operator may well copy the endpoint itself: both name one witness, and neither may 404 forever.
    const url = (eq < 0 ? '' : spec.slice(0, eq)).replace(/\/add-checkpoint\/*$/, '').replace(/\/+$/, '');
    if (!/^https?:\/\/[^\s/]\S*$/.test(url)) throw new UsageError(`--witness ${spec}: expected URL=VERIFIER_KEY with an http(s) URL`);
    try {
      return { url, key: parseCosignerVerifier(spec.slice(eq + 1)) };
    } catch (error) {
      if (error instanceof SigningKeyError) throw new UsageError(`--witness ${url}: ${error.message}`);
      throw error;
    }
  });
  if (quorum !== undefined && targets.length === 0) throw new UsageError('--witness-quorum needs at least one --witness');
  const n = quorum ?? (targets.length > 0 ? 1 : 0);
  if (targets.length > 0 && (!Number.isInteger(n) || n < 1 || n > targets.length)) {
    throw new UsageError(`--witness-quorum must be a whole number from 1 to ${targets.length} (the witnesses given), not ${n}`);
  }
  return { targets, quorum: n };
}
