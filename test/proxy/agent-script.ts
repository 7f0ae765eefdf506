// An agent that writes through the proxy and survives restarts: it keeps its idempotency key in
// a file (written and fsynced before the first request), and on 409 in_progress it waits what
// Retry-After says and asks again with the same key. Prints `answer: {...}` when it has one.
//
//   node --import=tsx test/proxy/agent-script.ts --proxy URL --key-file F --path /items --body JSON [--delay-ms N]
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { proxy: { type: 'string' }, 'key-file': { type: 'string' }, path: { type: 'string' }, body: { type: 'string' }, 'delay-ms': { type: 'string', default: '0' } },
});
const keyFile = values['key-file']!;
let key: string;
if (existsSync(keyFile)) {
  key = readFileSync(keyFile, 'utf8').trim();
} else {
  key = `agent-${randomUUID()}`;
  const fd = openSync(keyFile, 'wx');
  writeSync(fd, key);
  fsyncSync(fd);
  closeSync(fd);
}
console.log(`key: ${key}`);
for (let attempt = 0; attempt < 100; attempt++) {
  const res = await fetch(values.proxy + values.path!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, 'agent-run-id': `agent-pid-${process.pid}`, 'x-delay-ms': values['delay-ms']! },
    body: values.body,
  });
  const text = await res.text();
  if (res.status === 409 && res.headers.get('gatehouse-outcome') === 'in_progress') {
    const wait = Number(res.headers.get('retry-after') ?? 1);
    console.log(`in progress; asking again in ${wait} s`);
    await new Promise((r) => setTimeout(r, wait * 1000));
    continue;
  }
  console.log(`answer: ${JSON.stringify({ status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', outcome: res.headers.get('gatehouse-outcome'), body: JSON.parse(text) })}`);
  break;
}
