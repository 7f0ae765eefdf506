import test from 'ava';
import { Policies } from '../../src/policies/policies.js';

const policies = Policies.fromText(JSON.stringify({
  policies: [
    { method: 'POST', route: '/v1/tickets/urgent', approval: { approvers: 3 } },
    { method: 'post', route: '/v1/tickets/*', approval: {} },
    { method: 'POST', route: '/v1/*/comments', approval: { approvers: 2 } },
    { method: 'DELETE', route: '/', approval: { approvers: 5 } },
  ],
}));

const approversFor = (method: string, route: string) => policies.match(method, route).approval?.approvers ?? null;

test('the first matching policy in file order wins', (t) => {
  t.is(approversFor('POST', '/v1/tickets/urgent'), 3);
  t.is(approversFor('POST', '/v1/tickets/t_1'), 1);
});

test('a * segment matches exactly one segment, never none and never two', (t) => {
  t.is(approversFor('POST', '/v1/tickets'), null);
  t.is(approversFor('POST', '/v1/tickets/t_1/notes'), null);
  t.is(approversFor('POST', '/v1/anything/comments'), 2);
  t.is(approversFor('POST', '/v1/a/b/comments'), null);
});

test('the method matches exactly after upper-casing the policy, and other methods get no policy', (t) => {
  t.is(approversFor('POST', '/v1/tickets/t_2'), 1);
  t.is(approversFor('PUT', '/v1/tickets/t_2'), null);
  t.is(approversFor('DELETE', '/'), 5);
  t.is(approversFor('DELETE', '/x'), null);
});

test('an approval given as {} gets the documented defaults', (t) => {
  t.deepEqual(policies.match('POST', '/v1/tickets/t_3').approval, { approvers: 1, ttl_seconds: 900, request_ttl_seconds: 86_400 });
});

test('without a matching policy the command passes unchanged with no approval and no keys', (t) => {
  const none = Policies.none().match('POST', '/v1/payments');
  const command = { amount: 100 };
  t.is(none.approval, null);
  t.is(none.prepareCommand(command), command);
  t.is(none.businessKey(command), null);
  t.is(none.exclusiveScope(command), null);
  t.is(Policies.none().webhook, null);
});

test('a policy that an earlier one always shadows is refused at load time, naming both lines', (t) => {
  const text = '{"policies": [\n  {"method": "POST", "route": "/v1/tickets/*"},\n  {"method": "POST", "route": "/v1/tickets/urgent"}\n]}';
  const error = t.throws(() => Policies.fromText(text, 'shadow.json'));
  t.regex(error!.message, /shadow\.json, line 3, column 22: this policy \(POST \/v1\/tickets\/urgent\) can never apply: the policy at line 2/);
});

test('a method of * is refused: it is a valid method token, so it would match only a literal * and never apply as "any method"', (t) => {
  const error = t.throws(() => Policies.fromText('{"policies": [{"method": "*", "route": "/v1/a/*", "approval": {"approvers": 1}}]}', 'star.json'));
  t.regex(error!.message, /star\.json, line 1, .*"\*" is not a wildcard for methods/);
});

test('a * inside a segment is refused, since it would read as a prefix match it is not', (t) => {
  const error = t.throws(() => Policies.fromText('{"policies": [{"method": "POST", "route": "/v1/t*"}]}'));
  t.regex(error!.message, /line 1, column 34: .*a '\*' must be a whole segment/);
});
