/**
 * Every JSON request body's schema (schema/requests/, the one source of each body's shape) and
 * its validator, typed with the body's TypeScript type from src/core/request-bodies.ts. Route
 * modules list which validator each route uses (RouteModule.bodies), the served OpenAPI document
 * takes its request schemas from here, and test/http/openapi.test.ts holds routes, schemas and
 * document together.
 */
import claimOperation from '../../schema/requests/claim-operation.json' with { type: 'json' };
import createCheckpoint from '../../schema/requests/create-checkpoint.json' with { type: 'json' };
import createPrincipal from '../../schema/requests/create-principal.json' with { type: 'json' };
import decideApproval from '../../schema/requests/decide-approval.json' with { type: 'json' };
import fingerprint from '../../schema/requests/fingerprint.json' with { type: 'json' };
import reportOperation from '../../schema/requests/report-operation.json' with { type: 'json' };
import resolveOperation from '../../schema/requests/resolve-operation.json' with { type: 'json' };
import type {
  ClaimOperationBody, CreateCheckpointBody, CreatePrincipalBody, DecideApprovalBody, FingerprintBody,
  ReportOperationBody, ResolveOperationBody,
} from '../core/request-bodies.js';
import { bodyValidator } from './validate.js';

/** By `$id`, which is also the file name: the OpenAPI document refers to `requests/<$id>.json`. */
export const REQUEST_SCHEMAS: Readonly<Record<string, { $id: string }>> = Object.fromEntries(
  [claimOperation, createCheckpoint, createPrincipal, decideApproval, fingerprint, reportOperation, resolveOperation].map((s) => [s.$id, s]),
);

export const validateClaim = bodyValidator<ClaimOperationBody>(claimOperation);
export const validateReport = bodyValidator<ReportOperationBody>(reportOperation);
export const validateResolve = bodyValidator<ResolveOperationBody>(resolveOperation);
export const validateFingerprint = bodyValidator<FingerprintBody>(fingerprint);
export const validateCreatePrincipal = bodyValidator<CreatePrincipalBody>(createPrincipal);
export const validateDecision = bodyValidator<DecideApprovalBody>(decideApproval);
export const validateCheckpointRequest = bodyValidator<CreateCheckpointBody>(createCheckpoint);
