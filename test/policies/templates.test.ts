import test from 'ava';
import { DomainError } from '../../src/core/errors.js';
import { Policies } from '../../src/policies/policies.js';

function policyWith(templates: { business_key?: string; exclusive_scope?: string }) {
  return Policies.fromText(JSON.stringify({ policies: [{ method: 'POST', route: '/v1/x', ...templates }] })).match('POST', '/v1/x');
}

test('placeholders read the command by JSON Pointer; strings as they are, numbers and booleans as JSON text', (t) => {
  const policy = policyWith({ business_key: 'alert:{/event/id}:{/count}:{/urgent}', exclusive_scope: 'deploy:{/environment}' });
  const command = { event: { id: 'ev_1' }, count: 4.5, urgent: false, environment: 'production' };
  t.is(policy.businessKey(command), 'alert:ev_1:4.5:false');
  t.is(policy.exclusiveScope(command), 'deploy:production');
});

test('{{ and }} stand for literal braces, and ~1 and ~0 in a pointer for / and ~', (t) => {
  const policy = policyWith({ business_key: '{{{/a~1b}-{/c~0d}}}' });
  t.is(policy.businessKey({ 'a/b': 'x', 'c~d': 'y' }), '{x-y}');
});

test('a pointer into an array reads the element by index', (t) => {
  t.is(policyWith({ business_key: 'first:{/items/0/sku}' }).businessKey({ items: [{ sku: 'A1' }] }), 'first:A1');
});

test('a pointer that finds nothing is command_invalid naming the pointer', (t) => {
  const policy = policyWith({ exclusive_scope: 'deploy:{/environment}' });
  const error = t.throws(() => policy.exclusiveScope({ env: 'production' }), { instanceOf: DomainError }) as DomainError;
  t.is(error.code, 'command_invalid');
  t.regex(error.message, /exclusive_scope reads \/environment but the command has nothing there/);
  t.deepEqual((error.details.errors as { path: string }[]).map((e) => e.path), ['/environment']);
});

test('a pointer that lands on an object, an array or null is command_invalid', (t) => {
  const policy = policyWith({ business_key: 'k:{/v}' });
  for (const v of [{ a: 1 }, [1], null]) {
    const error = t.throws(() => policy.businessKey({ v }), { instanceOf: DomainError }) as DomainError;
    t.is(error.code, 'command_invalid');
    t.regex(error.message, /reads \/v but the command has (an object|an array|null) there/);
  }
});

test('a pointer never reaches into prototypes', (t) => {
  const policy = policyWith({ business_key: '{/constructor}' });
  t.throws(() => policy.businessKey({}), { instanceOf: DomainError, message: /has nothing there/ });
});

test('a malformed template stops loading, saying what is wrong', (t) => {
  const cases: [string, RegExp][] = [
    ['deploy:{environment}', /is not a JSON Pointer \(RFC 6901\): it must start with '\/', e\.g\. \{\/environment\}/],
    ['deploy:{/environment', /never closed/],
    ['deploy}', /a lone '}'/],
    ['{/a~2}', /'~' in a JSON Pointer must be written ~0/],
  ];
  for (const [template, message] of cases) {
    const error = t.throws(() => Policies.fromText(JSON.stringify({ policies: [{ method: 'POST', route: '/v1/x', business_key: template }] })));
    t.regex(error!.message, message, template);
    t.regex(error!.message, /line 1, column \d+: the business_key template/);
  }
});
