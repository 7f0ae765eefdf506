/**
 * What a route's policy decides for one claim. Its own module so that the loader that builds
 * policies (load-config.ts) and the Policies that hands them out (policies.ts) both depend on
 * it, and not on each other.
 */
import type { JsonValue } from '../core/json.js';

export interface ApprovalPolicy {
  approvers: number;
  ttl_seconds: number;
  request_ttl_seconds: number;
}

export interface MatchedPolicy {
  approval: ApprovalPolicy | null;
  /** Applies the schema's defaults to a copy and validates; throws DomainError command_invalid with `errors`. */
  prepareCommand(command: JsonValue): JsonValue;
  /** Template over JSON Pointers, e.g. "alert:{/event_id}"; null without one. Throws DomainError command_invalid. */
  businessKey(command: JsonValue): string | null;
  /** e.g. "deploy:{/environment}"; null without one. Throws DomainError command_invalid. */
  exclusiveScope(command: JsonValue): string | null;
}
