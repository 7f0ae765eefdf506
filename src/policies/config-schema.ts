/**
 * The shape of the policies file (docs/formats.md#policies-file). Unknown members are refused
 * everywhere: a misspelt `"aproval"` must stop start-up, not silently turn a
 * policy that needs approval into one that does not.
 */
export const APPROVAL_DEFAULTS = { approvers: 1, ttl_seconds: 900, request_ttl_seconds: 86_400 } as const;

const YEAR_SECONDS = 366 * 86_400;
const template = { type: 'string', minLength: 1, maxLength: 1000 };

export const policyFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['policies'],
  properties: {
    policies: { type: 'array', items: { $ref: '#/$defs/policy' } },
    webhook: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'secret'],
      properties: {
        url: { type: 'string', minLength: 1 },
        secret: { type: 'string', minLength: 1 },
      },
    },
  },
  $defs: {
    policy: {
      type: 'object',
      additionalProperties: false,
      required: ['method', 'route'],
      properties: {
        method: { type: 'string', minLength: 1 },
        route: { type: 'string', minLength: 1 },
        schema: { type: ['object', 'boolean'] },
        approval: {
          type: 'object',
          additionalProperties: false,
          properties: {
            approvers: { type: 'integer', minimum: 1, maximum: 100 },
            ttl_seconds: { type: 'integer', minimum: 1, maximum: YEAR_SECONDS },
            request_ttl_seconds: { type: 'integer', minimum: 1, maximum: YEAR_SECONDS },
          },
        },
        business_key: template,
        exclusive_scope: template,
      },
    },
  },
} as const;

/** What the file holds once its shape has been checked. */
export interface PolicyFile {
  policies: PolicyEntry[];
  webhook?: { url: string; secret: string };
}

export interface PolicyEntry {
  method: string;
  route: string;
  schema?: object | boolean;
  approval?: { approvers?: number; ttl_seconds?: number; request_ttl_seconds?: number };
  business_key?: string;
  exclusive_scope?: string;
}
