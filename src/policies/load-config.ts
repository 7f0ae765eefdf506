/**
 * Reads and checks the policies file (`gatehouse serve --config FILE`,
 * docs/formats.md#policies-file). Every problem is a PolicyConfigError that names the file, the
 * line and column of the member at fault, what is wrong and what to do, so a
 * bad file stops start-up with a message an operator can act on.
 */
import fs from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { JsonValue } from '../core/json.js';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import { withoutUserinfo } from '../core/url-for-log.js';
import { compileCommandSchema } from './command-schema.js';
import { PolicyConfigError } from './config-error.js';
import { APPROVAL_DEFAULTS, policyFileSchema, type PolicyEntry, type PolicyFile } from './config-schema.js';
import { compilePattern, PatternError, shadows, type RoutePattern } from './route-match.js';
import { offsetOfPointer, positionOf } from './source-position.js';
import { parseTemplate, TemplateError } from './templates.js';
import type { MatchedPolicy } from './matched-policy.js';

export { PolicyConfigError } from './config-error.js';

export interface CompiledPolicy {
  pattern: RoutePattern;
  policy: MatchedPolicy;
}

export interface PolicyConfig {
  policies: CompiledPolicy[];
  webhook: { url: string; secret: string } | null;
}

/** Policy schemas nest; the parser is iterative, but keep recursion elsewhere (ajv, copies) bounded. */
const CONFIG_MAX_DEPTH = 256;

const validateShape = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true, logger: false }).compile(policyFileSchema);

export function loadPolicyConfig(file: string): PolicyConfig {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new PolicyConfigError(file, `cannot read it (${code}); check the path given to --config`);
  }
  return parsePolicyConfig(bytes, file);
}

/** Parses a policies file's content; `file` names it in messages. */
export function parsePolicyConfig(content: Uint8Array | string, file: string): PolicyConfig {
  const text = typeof content === 'string' ? content : Buffer.from(content).toString('utf8');
  const fail = (pointer: string, problem: string): never => {
    throw new PolicyConfigError(file, problem, positionOf(text, offsetOfPointer(text, pointer)));
  };
  let document: JsonValue;
  try {
    document = parseStrictJson(content, { maxDepth: CONFIG_MAX_DEPTH });
  } catch (error) {
    if (!(error instanceof JsonInputError)) throw error;
    const position = error.offset === undefined ? null : positionOf(text, error.offset);
    throw new PolicyConfigError(file, `${error.message.replace(/ at offset \d+/, '')}; fix the JSON (each member name once, no comments, no trailing commas)`, position);
  }
  if (!validateShape(document)) fail(...describeShapeError(mostTelling(validateShape.errors!)));
  const shaped = document as unknown as PolicyFile;

  const policies: CompiledPolicy[] = [];
  shaped.policies.forEach((entry, index) => {
    const compiled = compileEntry(entry, `/policies/${index}`, fail);
    const earlier = policies.findIndex((p) => shadows(p.pattern, compiled.pattern));
    if (earlier !== -1) {
      const line = positionOf(text, offsetOfPointer(text, `/policies/${earlier}`)).line;
      fail(`/policies/${index}/route`, `this policy (${compiled.pattern.method} ${entry.route}) can never apply: the policy at line ${line} (${policies[earlier]!.pattern.method} ${policies[earlier]!.pattern.route}) matches every request it would, and the first match wins; move the more specific policy first or remove one`);
    }
    policies.push(compiled);
  });
  return { policies, webhook: shaped.webhook ? checkWebhook(shaped.webhook, fail) : null };
}

type Fail = (pointer: string, problem: string) => never;

function compileEntry(entry: PolicyEntry, at: string, fail: Fail): CompiledPolicy {
  let pattern: RoutePattern;
  try {
    pattern = compilePattern(entry.method, entry.route);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    return fail(`${at}/${error.member}`, `${error.message}; fix the ${error.member}`);
  }
  const label = `${pattern.method} ${entry.route}`;
  let prepareCommand = (command: JsonValue): JsonValue => command;
  if (entry.schema !== undefined) {
    try {
      prepareCommand = compileCommandSchema(entry.schema as JsonValue, label);
    } catch (error) {
      fail(`${at}/schema`, `the schema for ${label} is not a usable JSON Schema 2020-12: ${(error as Error).message}; fix the schema (unknown keywords, unknown formats and ignored defaults are refused)`);
    }
  }
  const template = (member: 'business_key' | 'exclusive_scope') => {
    const source = entry[member];
    if (source === undefined) return null;
    try {
      return parseTemplate(source, member);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return fail(`${at}/${member}`, `the ${member} template ${JSON.stringify(source)} is malformed: ${error.message}`);
    }
  };
  const businessKey = template('business_key');
  const exclusiveScope = template('exclusive_scope');
  const policy: MatchedPolicy = {
    approval: entry.approval ? { ...APPROVAL_DEFAULTS, ...entry.approval } : null,
    prepareCommand,
    businessKey: (command) => businessKey?.render(command) ?? null,
    exclusiveScope: (command) => exclusiveScope?.render(command) ?? null,
  };
  return { pattern, policy: Object.freeze(policy) };
}

function checkWebhook(webhook: { url: string; secret: string }, fail: Fail): { url: string; secret: string } {
  let url: URL | null = null;
  try {
    url = new URL(webhook.url);
  } catch {
    // reported below
  }
  // fetch refuses to send to such a URL, so every delivery would fail for an hour and then be
  // dropped; and the password would be written wherever the URL is shown. Checked first, so the
  // message below never quotes one.
  if (url && (url.username !== '' || url.password !== '')) {
    fail('/webhook/url', 'the webhook url has a user name or password in it (user:password@ before the host), and no request can be sent to such a URL; remove it: a receiver checks that a delivery is Gatehouse\'s by its Gatehouse-Signature header, made with the webhook secret');
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    fail('/webhook/url', `the webhook url ${JSON.stringify(withoutUserinfo(webhook.url))} is not an absolute http(s) URL; write it like https://hooks.example.com/gatehouse`);
  }
  return { url: webhook.url, secret: webhook.secret };
}

/** An unknown member is most likely a typo of the member another error says is missing: report the typo. */
function mostTelling(errors: ErrorObject[]): ErrorObject {
  return errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0]!;
}

/** The pointer to report and a sentence saying what is wrong and what to do. */
function describeShapeError(error: ErrorObject): [string, string] {
  const at = error.instancePath;
  const where = at === '' ? 'the top level' : readable(at);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const member = String(params.additionalProperty);
      const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {}).join(', ');
      return [`${at}/${escapeToken(member)}`, `unknown member "${member}" in ${where}; remove it or fix its spelling (allowed: ${allowed})`];
    }
    case 'required':
      return [at, `${where} lacks the required member "${String(params.missingProperty)}"; add it`];
    case 'type':
      return [at, `${where} must be ${String(params.type).replace(',', ' or ')}`];
    default:
      return [at, `${where} ${error.message ?? 'is not valid'}`];
  }
}

/** `/policies/0/approval` → `policies[0].approval`. */
function readable(pointer: string): string {
  return pointer.slice(1).split('/').map((t) => (/^\d+$/.test(t) ? `[${t}]` : `.${t}`)).join('').replace(/^\./, '');
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
