/**
 * Route policies (docs/formats.md#policies-file): which schema a command must satisfy, whether a
 * claim needs approval, and how its business key and exclusive scope are
 * built. Loaded once at start-up; `match` is pure and cheap.
 */
import type { JsonValue } from '../core/json.js';
import { loadPolicyConfig, parsePolicyConfig, type CompiledPolicy } from './load-config.js';
import { patternMatches } from './route-match.js';
import type { MatchedPolicy } from './matched-policy.js';

export { PolicyConfigError } from './config-error.js';
export type { ApprovalPolicy, MatchedPolicy } from './matched-policy.js';

/** No matching policy: the command as sent, no approval, no keys. */
const NO_POLICY: MatchedPolicy = Object.freeze({
  approval: null,
  prepareCommand: (command: JsonValue) => command,
  businessKey: () => null,
  exclusiveScope: () => null,
});

export class Policies {
  private constructor(
    private readonly entries: readonly CompiledPolicy[],
    readonly webhook: { url: string; secret: string } | null,
  ) {}

  /** Throws PolicyConfigError naming the file, line, column and the problem. */
  static fromFile(file: string): Policies {
    const config = loadPolicyConfig(file);
    return new Policies(config.policies, config.webhook);
  }

  /** The same checks on text in hand; `label` stands for the file name in messages. */
  static fromText(text: string, label = 'policies.json'): Policies {
    const config = parsePolicyConfig(text, label);
    return new Policies(config.policies, config.webhook);
  }

  static none(): Policies {
    return new Policies([], null);
  }

  /** `method` upper-cased (validateMethod) and `route` valid (validateRoute); the first match in file order wins. */
  match(method: string, route: string): MatchedPolicy {
    return this.entries.find((entry) => patternMatches(entry.pattern, method, route))?.policy ?? NO_POLICY;
  }
}
