import type { CommandModule } from 'yargs';
import type { JsonValue } from '../../src/core/json.js';
import { JsonInputError, parseStrictJson } from '../../src/core/strict-json.js';
import { DomainError } from '../../src/core/errors.js';
import { validateAccountId } from '../../src/principals/accounts.js';
import { print, runVerb } from '../output.js';

interface FingerprintArgs {
  account: string;
  method: string;
  route: string;
  command: string;
  config?: string;
  json: boolean;
}

/** The command value itself is depth 1 and may nest 64 deep, as in a request body (docs/http-api.md, Conventions). */
const COMMAND_MAX_DEPTH = 64;

/**
 * `gatehouse fingerprint` (docs/cli.md, docs/formats.md#the-fingerprint): the same prepareIntent as a claim and
 * `POST /v1/fingerprint`, so it prints the very fingerprint the service would
 * compute. It needs no store and no data dir: only the policies file.
 */
export const fingerprintCommand: CommandModule<object, FingerprintArgs> = {
  command: 'fingerprint',
  describe: 'print the fingerprint of an intended write (the policy schema applied as a claim would)',
  builder: (y) => y.options({
    account: { type: 'string', demandOption: true, describe: 'account id' },
    method: { type: 'string', demandOption: true, describe: 'HTTP method the gateway will call' },
    route: { type: 'string', demandOption: true, describe: 'request path the gateway will call, e.g. /v1/payments' },
    command: { type: 'string', demandOption: true, describe: 'the command as JSON text' },
    config: { type: 'string', describe: 'policies file (JSON), as given to serve --config' },
    json: { type: 'boolean', default: false, describe: 'print {"fingerprint": "…"}' },
  }),
  handler: (args) => runVerb(async () => {
    const accountId = validateAccountId(args.account, '--account');
    // Loaded on demand, like every verb's heavy modules: ajv is only needed here.
    const [{ prepareIntent }, { Policies }] = await Promise.all([import('../../src/operations/intent.js'), import('../../src/policies/policies.js')]);
    const policies = args.config ? Policies.fromFile(args.config) : Policies.none();
    const intent = prepareIntent(policies, accountId, { method: args.method, route: args.route, command: parseCommand(args.command) });
    print(args, intent.fingerprint, { fingerprint: intent.fingerprint });
  }),
};

/** Untrusted text: the strict parser, as for an HTTP body, so both refuse the same inputs. */
function parseCommand(text: string): JsonValue {
  try {
    return parseStrictJson(text, { maxDepth: COMMAND_MAX_DEPTH });
  } catch (error) {
    if (error instanceof JsonInputError) throw new DomainError(error.code, `--command: ${error.message}`);
    throw error;
  }
}
