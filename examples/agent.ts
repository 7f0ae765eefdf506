// An example agent step that writes through Gatehouse itself with execute(intent, spec, write):
// the intent's key lives in a SQLite file, so a restarted process finds it and gets the replay.
//
//   node --import=tsx examples/agent.ts --gatehouse http://127.0.0.1:8080 --api-key gh_… \
//     --upstream http://127.0.0.1:9100 --store ./agent-keys.db --intent task-812:create-ticket \
//     --title "disk full on db-3" [--keys pinned-keys.json] [--hang]
//
// Prints one line `result: {…}` with the typed result. `--hang` keeps the process alive after
// that line (the drills kill it with SIGKILL there, between attempts).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Executor, GatehouseClient, SqliteKeyStore, type JsonValue, type PinnedKeysInput } from '../src/client/index.js';

const { values } = parseArgs({
  options: {
    gatehouse: { type: 'string', default: 'http://127.0.0.1:8080' },
    'api-key': { type: 'string' },
    upstream: { type: 'string', default: 'http://127.0.0.1:9100' },
    route: { type: 'string', default: '/tickets' },
    store: { type: 'string', default: 'agent-keys.db' },
    intent: { type: 'string' },
    title: { type: 'string', default: 'a ticket' },
    tag: { type: 'string' },
    keys: { type: 'string' },
    hang: { type: 'boolean', default: false },
  },
});

const apiKey = values['api-key'] ?? process.env.GATEHOUSE_API_KEY;
if (!apiKey || !values.intent) {
  console.error('agent: --api-key and --intent are required');
  process.exit(2);
}

const executor = new Executor({
  client: new GatehouseClient({ baseUrl: values.gatehouse, apiKey }),
  keyStore: new SqliteKeyStore(values.store),
  pinnedKeys: values.keys ? (JSON.parse(readFileSync(values.keys, 'utf8')) as PinnedKeysInput) : undefined,
  log: (m, f) => console.error(`agent: ${m} ${f ? JSON.stringify(f) : ''}`),
});

const command: { [k: string]: JsonValue } = { title: values.title };
if (values.tag) command.tag = values.tag;

const result = await executor.execute(values.intent, { method: 'POST', route: values.route, command }, async () => {
  const res = await fetch(values.upstream + values.route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(command),
  });
  const body = (await res.json()) as JsonValue;
  if (res.status >= 500) throw new Error(`upstream answered ${res.status}`);
  return { ok: res.status < 400, response: { status: res.status, body } };
});

const { operation: _op, ...shown } = result as typeof result & { operation?: unknown };
console.log(`result: ${JSON.stringify({ ...shown, operation_id: 'operation' in result && result.operation ? result.operation.id : null })}`);
if (values.hang) {
  setInterval(() => {}, 1 << 30);
} else {
  executor.keyStore.close();
}
