import test from 'ava';
import { ERROR_STATUS } from '../../src/http/error-status.js';
import { DomainError } from '../../src/core/errors.js';
import { Policies } from '../../src/policies/policies.js';

const policies = Policies.fromText(JSON.stringify({
  policies: [{
    method: 'POST',
    route: '/v1/deploys',
    schema: {
      type: 'object',
      required: ['environment', 'version'],
      additionalProperties: false,
      properties: {
        environment: { enum: ['staging', 'production'] },
        version: { type: 'string', minLength: 1 },
        strategy: { type: 'string', default: 'rolling' },
        options: { type: 'object', default: {}, properties: { dry_run: { type: 'boolean', default: false } } },
      },
    },
  }],
}));
const deploys = policies.match('POST', '/v1/deploys');

test('the schema fills in defaults, nested ones included', (t) => {
  t.deepEqual(deploys.prepareCommand({ environment: 'staging', version: '1.2.3' }), {
    environment: 'staging', version: '1.2.3', strategy: 'rolling', options: { dry_run: false },
  });
});

test('defaults are applied to a copy: the caller\'s command is left as it was sent', (t) => {
  const command = { environment: 'staging', version: '1.2.3', options: {} };
  deploys.prepareCommand(command);
  t.deepEqual(command, { environment: 'staging', version: '1.2.3', options: {} });
});

test('a command the schema refuses throws command_invalid listing every error with its path', (t) => {
  const error = t.throws(() => deploys.prepareCommand({ environment: 'prod', extra: 1 }), { instanceOf: DomainError }) as DomainError;
  t.is(error.code, 'command_invalid');
  t.is(ERROR_STATUS[error.code], 400);
  const errors = error.details.errors as { path: string; message: string }[];
  t.deepEqual(errors.map((e) => e.path).sort(), ['/environment', '/extra', '/version']);
  t.true(errors.every((e) => typeof e.message === 'string' && e.message.length > 0));
  t.regex(error.message, /POST \/v1\/deploys: .* \(and 2 more\)$/);
});

test('a command that is not even an object is command_invalid at the empty path', (t) => {
  const error = t.throws(() => deploys.prepareCommand(null), { instanceOf: DomainError }) as DomainError;
  t.is(error.code, 'command_invalid');
  t.deepEqual(error.details.errors, [{ path: '', message: 'must be object' }]);
});

test('a schema with a misspelt keyword stops loading instead of letting every command through', (t) => {
  const text = '{"policies": [\n  {"method": "POST", "route": "/v1/x",\n   "schema": {"type": "object", "requried": ["a"]}}\n]}';
  const error = t.throws(() => Policies.fromText(text, 'typo.json'));
  t.regex(error!.message, /typo\.json, line 3, column 4: the schema for POST \/v1\/x is not a usable JSON Schema 2020-12: .*unknown keyword: "requried"/);
});

test('a schema whose $ref leads nowhere stops loading', (t) => {
  const text = JSON.stringify({ policies: [{ method: 'POST', route: '/v1/x', schema: { $ref: 'https://example.com/elsewhere.json' } }] });
  t.throws(() => Policies.fromText(text), { message: /not a usable JSON Schema 2020-12/ });
});

test('a schema\'s standard formats (email, date-time, uri, uuid, …) load and are enforced, not a start-up failure', (t) => {
  const formats = Policies.fromText(JSON.stringify({
    policies: [{
      method: 'POST',
      route: '/v1/notices',
      schema: {
        type: 'object',
        properties: {
          to: { type: 'string', format: 'email' },
          at: { type: 'string', format: 'date-time' },
          link: { type: 'string', format: 'uri' },
          ref: { type: 'string', format: 'uuid', default: '00000000-0000-4000-8000-000000000000' },
        },
      },
    }],
  })).match('POST', '/v1/notices');
  const good = { to: 'ops@example.com', at: '2026-12-07T21:30:00Z', link: 'https://example.com/x' };
  t.deepEqual(formats.prepareCommand(good), { ...good, ref: '00000000-0000-4000-8000-000000000000' });
  const error = t.throws(() => formats.prepareCommand({ to: 'not an address', at: 'yesterday', link: 'no scheme' }), { instanceOf: DomainError }) as DomainError;
  t.is(error.code, 'command_invalid');
  t.deepEqual((error.details.errors as { path: string }[]).map((e) => e.path).sort(), ['/at', '/link', '/to']);
});

test('a format no validator knows stops loading, as an unknown keyword does: it would check nothing', (t) => {
  const text = JSON.stringify({ policies: [{ method: 'POST', route: '/v1/x', schema: { type: 'string', format: 'iban' } }] });
  t.throws(() => Policies.fromText(text), { message: /not a usable JSON Schema 2020-12: .*unknown format "iban"/ });
});
