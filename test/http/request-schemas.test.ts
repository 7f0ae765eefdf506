import test from 'ava';
import type {
  ClaimOperationBody, CreateCheckpointBody, CreatePrincipalBody, DecideApprovalBody, FingerprintBody,
  ReportOperationBody, ResolveOperationBody,
} from '../../src/core/request-bodies.js';
import { REQUEST_SCHEMAS } from '../../src/http/request-schemas.js';

/**
 * What a body type says about each member: whether it is required and whether null is allowed.
 * Written as a literal per type below; tsc fails when the literal and the type disagree (a
 * member added, dropped, made optional or nullable), and the test fails when the literal and
 * the schema disagree. So a type cannot drift from its schema in schema/requests/.
 */
type Shape<T> = { [K in keyof T]-?: { required: {} extends Pick<T, K> ? false : true; nullable: null extends T[K] ? true : false } };

const claim: Shape<ClaimOperationBody> = {
  method: { required: true, nullable: false },
  route: { required: true, nullable: false },
  command: { required: true, nullable: true },
  agent_run_id: { required: false, nullable: true },
  business_key: { required: false, nullable: true },
  exclusive_scope: { required: false, nullable: true },
  lease_seconds: { required: false, nullable: false },
  summary: { required: false, nullable: true },
};
const report: Shape<ReportOperationBody> = {
  type: { required: true, nullable: false },
  lease_token: { required: true, nullable: false },
  provider_ref: { required: false, nullable: false },
  outcome: { required: false, nullable: false },
  response: { required: false, nullable: false },
};
const resolve: Shape<ResolveOperationBody> = {
  state: { required: true, nullable: false },
  note: { required: true, nullable: false },
  provider_ref: { required: false, nullable: false },
  response: { required: false, nullable: false },
};
const fingerprint: Shape<FingerprintBody> = {
  method: { required: true, nullable: false },
  route: { required: true, nullable: false },
  command: { required: true, nullable: true },
};
const createPrincipal: Shape<CreatePrincipalBody> = {
  account_id: { required: true, nullable: false },
  roles: { required: true, nullable: false },
  name: { required: false, nullable: true },
};
const decision: Shape<DecideApprovalBody> = {
  decision: { required: true, nullable: false },
  fingerprint: { required: true, nullable: false },
  reason: { required: false, nullable: true },
};
const checkpoint: Shape<CreateCheckpointBody> = {
  account_id: { required: true, nullable: false },
};

const TYPES: Record<string, Record<string, { required: boolean; nullable: boolean }>> = {
  'claim-operation': claim,
  'report-operation': report,
  'resolve-operation': resolve,
  fingerprint,
  'create-principal': createPrincipal,
  'decide-approval': decision,
  'create-checkpoint': checkpoint,
};

interface PropertySchema { type?: string | string[]; enum?: unknown[] }

/** The same facts read from a JSON schema: `true` admits anything, null included. */
function schemaShape(schema: { required?: string[]; properties?: Record<string, PropertySchema | boolean> }) {
  return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, p]) => [name, {
    required: (schema.required ?? []).includes(name),
    nullable: p === true || (typeof p === 'object' && ([p.type].flat().includes('null') || (p.enum ?? []).includes(null))),
  }]));
}

test('every request body type agrees with its schema in schema/requests on members, required and null', (t) => {
  t.deepEqual(Object.keys(TYPES).sort(), Object.keys(REQUEST_SCHEMAS).sort(), 'a type for every schema');
  for (const [id, shape] of Object.entries(TYPES)) {
    t.deepEqual(shape, schemaShape(REQUEST_SCHEMAS[id] as never), id);
  }
});

test('enumerated members of the types are the schemas\' enums', (t) => {
  const enums = (id: string, member: string) => ((REQUEST_SCHEMAS[id] as unknown as { properties: Record<string, PropertySchema> }).properties[member]!.enum ?? []);
  const reportTypes: Record<ReportOperationBody['type'], true> = { heartbeat: true, sent: true, accepted: true, completed: true, canceled: true };
  const outcomes: Record<NonNullable<ReportOperationBody['outcome']>, true> = { succeeded: true, failed: true };
  const resolveStates: Record<ResolveOperationBody['state'], true> = { succeeded: true, failed: true, canceled: true };
  const decisions: Record<DecideApprovalBody['decision'], true> = { approve: true, deny: true };
  t.deepEqual(Object.keys(reportTypes).sort(), (enums('report-operation', 'type') as string[]).sort());
  t.deepEqual(Object.keys(outcomes).sort(), (enums('report-operation', 'outcome') as string[]).sort());
  t.deepEqual(Object.keys(resolveStates).sort(), (enums('resolve-operation', 'state') as string[]).sort());
  t.deepEqual(Object.keys(decisions).sort(), (enums('decide-approval', 'decision') as string[]).sort());
});
