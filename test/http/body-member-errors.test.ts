import test from 'ava';
import { DomainError } from '../../src/core/errors.js';
import { validateClaim, validateReport, validateResolve } from '../../src/http/request-schemas.js';
import type { JsonValue } from '../../src/core/json.js';
import { startTestApp } from '../helpers/app.js';

/**
 * docs/http-api.md (Conventions, Request bodies): a body refused by its schema is
 * `400 invalid_request` naming the member — inside a nested object too, from the body down,
 * whether the member is unknown, missing or of the wrong type.
 */

function messageOf(validate: (body: JsonValue) => unknown, body: JsonValue): string {
  const error = (() => {
    try {
      validate(body);
    } catch (thrown) {
      return thrown;
    }
    return null;
  })();
  if (!(error instanceof DomainError) || error.code !== 'invalid_request') throw new Error(`not refused as invalid_request: ${String(error)}`);
  return error.message;
}

const claim = { method: 'POST', route: '/v1/tickets', command: {} };
const report = { type: 'completed', lease_token: 't', outcome: 'succeeded' };
const resolve = { state: 'failed', note: 'checked downstream' };

test('an unknown or missing member of a nested object is named from the body down', (t) => {
  const cases: Array<[(body: JsonValue) => unknown, JsonValue, string]> = [
    [validateClaim, { ...claim, summary: { foo: 1 } }, 'the member "summary.foo" is not allowed here'],
    [validateClaim, { ...claim, summary: { target: 1 } }, 'the member "summary.target" must be string'],
    [validateReport, { ...report, response: { status: 200, extra: true } }, 'the member "response.extra" is not allowed here'],
    [validateReport, { ...report, response: {} }, 'the member "response.status" is required'],
    [validateReport, { ...report, response: { status: 200, headers: { 'x/y~z': 1 } } }, 'the member "response.headers.x/y~z" must be string'],
    [validateResolve, { ...resolve, response: { status: 200, extra: true } }, 'the member "response.extra" is not allowed here'],
    [validateResolve, { ...resolve, response: { body: {} } }, 'the member "response.status" is required'],
    // At the top level the name is the member's alone, as before.
    [validateClaim, { ...claim, foo: 1 }, 'the member "foo" is not allowed here'],
    [validateClaim, { method: 'POST', route: '/v1/tickets' }, 'the member "command" is required'],
    [validateClaim, [] as JsonValue, 'the member "body" must be object'],
  ];
  for (const [validate, body, message] of cases) t.is(messageOf(validate, body), message, JSON.stringify(body));
});

test('[sqlite] a claim with an unknown summary member is refused naming summary.foo', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gateway = await app.keyFor('acme', 'gateway');
  const res = await app.request('POST', '/v1/operations', { key: gateway, body: { ...claim, summary: { foo: 1 } }, headers: { 'idempotency-key': 'k-1' } });
  t.is(res.status, 400, res.text);
  t.deepEqual(res.body, { error: { code: 'invalid_request', message: 'the member "summary.foo" is not allowed here' } });
});
