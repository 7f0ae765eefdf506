import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A policies file whose schema defaults `priority`, for the fingerprint tests. */
export const POLICY_FILE_TEXT = JSON.stringify({
  policies: [{
    method: 'POST',
    route: '/v1/tickets/*',
    schema: {
      type: 'object',
      required: ['title'],
      additionalProperties: false,
      properties: {
        title: { type: 'string', minLength: 1 },
        priority: { enum: ['low', 'normal', 'high'], default: 'normal' },
      },
    },
  }],
}, null, 2);

export function writePolicyFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fp-'));
  const file = path.join(dir, 'policies.json');
  fs.writeFileSync(file, POLICY_FILE_TEXT);
  return file;
}
