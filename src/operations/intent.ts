/**
 * What a claim and `POST /v1/fingerprint` both compute from `{method, route,
 * command}` (docs/formats.md#the-fingerprint): the validated method and route, the command after
 * its policy's schema, and the fingerprint. One function for both, so the
 * fingerprint a gateway asks for can never differ from the one its claim gets.
 */
import { fingerprint } from '../core/fingerprint.js';
import type { JsonValue } from '../core/json.js';
import { RouteError, validateMethod, validateRoute } from '../core/route.js';
import { DomainError } from '../core/errors.js';
import type { MatchedPolicy, Policies } from '../policies/policies.js';

export interface IntentInput {
  method: unknown;
  route: unknown;
  /** Any JSON value, null included; the caller checks that the member was present. */
  command: JsonValue;
}

export interface PreparedIntent {
  /** Upper-cased HTTP token. */
  method: string;
  route: string;
  /** The command after the matched policy's schema applied its defaults. */
  command: JsonValue;
  fingerprint: string;
  policy: MatchedPolicy;
}

/** Throws DomainError invalid_request (method), invalid_route, or command_invalid (schema). */
export function prepareIntent(policies: Policies, accountId: string, input: IntentInput): PreparedIntent {
  let method: string;
  let route: string;
  try {
    method = validateMethod(input.method);
    route = validateRoute(input.route);
  } catch (error) {
    if (error instanceof RouteError) throw new DomainError(error.code, error.message, {}, { cause: error });
    throw error;
  }
  const policy = policies.match(method, route);
  const command = policy.prepareCommand(input.command);
  return { method, route, command, policy, fingerprint: fingerprint({ account_id: accountId, method, route, command }) };
}
