import test, { type ExecutionContext } from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { addPrincipal, spawnGatehouse, tempDir, type SpawnedGatehouse } from '../helpers/server-process.js';
import { parseAnswers } from '../helpers/raw-http.js';

/**
 * `gatehouse serve` stopped by SIGTERM while its clients are busy (docs/cli.md, serve): it stops
 * taking connections, and every request it had received is worked to its end and answered. A
 * claim that committed is never cut from its answer (its lease token would be lost, and the
 * operation turn `unknown` with nothing written).
 */

interface Answer {
  key: string;
  startedAt: number;
  endedAt?: number;
  status?: number;
  body?: { operation?: { id: string }; error?: { code: string } };
  error?: string;
  reusedSocket?: boolean;
}

function claim(url: URL, agent: http.Agent, apiKey: string, key: string): Promise<Answer> {
  const body = JSON.stringify({ method: 'POST', route: '/tickets', command: { key } });
  const answer: Answer = { key, startedAt: performance.now() };
  return new Promise((resolve) => {
    const req = http.request({
      host: url.hostname, port: url.port, path: '/v1/operations', method: 'POST', agent,
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ ...answer, endedAt: performance.now(), status: res.statusCode!, body: JSON.parse(text) }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ ...answer, error: e.code ?? e.message, reusedSocket: req.reusedSocket }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ ...answer, error: e.code ?? e.message, reusedSocket: req.reusedSocket }));
    req.end(body);
  });
}

/** `gatehouse serve` in a child process on a fresh data dir, stopped and removed after the test. */
async function serveFresh(t: ExecutionContext, extraArgs: string[] = []): Promise<{ dir: string; server: SpawnedGatehouse; url: URL }> {
  const { dir, cleanup } = tempDir();
  t.teardown(cleanup);
  const server = await spawnGatehouse({ args: ['--data-dir', dir, ...extraArgs] });
  t.teardown(() => server.stop());
  return { dir, server, url: new URL(server.url) };
}

test('[sqlite] SIGTERM under 64 keep-alive clients claiming: every claim the server received is answered, none committed without its answer', async (t) => {
  t.timeout(120_000);
  const { dir, server, url } = await serveFresh(t);
  const apiKey = await addPrincipal(dir, 'acme', ['gateway']);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  t.teardown(() => agent.destroy());

  const answers: Answer[] = [];
  let signalledAt = Infinity;
  const clients = Array.from({ length: 64 }, async (_, c) => {
    for (let i = 0; ; i++) {
      const answer = await claim(url, agent, apiKey, `k-${c}-${i}`);
      answers.push(answer);
      // After the signal the listener is gone: a refused connection ends this client.
      if (answer.error === 'ECONNREFUSED' || (answer.error && answer.startedAt > signalledAt)) return;
    }
  });
  await new Promise((r) => setTimeout(r, 1_500));
  signalledAt = performance.now();
  server.process.child.kill('SIGTERM');
  await Promise.all(clients);
  const exited = await server.process.exited;
  const stoppedMs = performance.now() - signalledAt;
  t.deepEqual(exited, { code: 0, signal: null }, server.process.stderr);
  t.true(stoppedMs < 10_000, `stopped ${Math.round(stoppedMs)} ms after the signal`);

  const db = new BetterSqlite3(path.join(dir, 'gatehouse.db'), { readonly: true });
  const operations = db.prepare("SELECT id, idempotency_key AS key FROM operations WHERE account_id = 'acme'").all() as Array<{ id: string; key: string }>;
  db.close();
  const created = new Map(answers.filter((a) => a.status === 201).map((a) => [a.key, a.body!.operation!.id]));
  const stored = new Set(operations.map((o) => o.key));

  // The point of the test: requests were in flight when the signal came, and they were answered.
  const across = answers.filter((a) => a.startedAt < signalledAt && a.status === 201 && a.endedAt! > signalledAt).length;
  t.log(`${answers.length} claims, ${created.size} answered 201, ${operations.length} stored; ${across} were in flight when the signal came and answered 201; ${answers.filter((a) => a.error && a.error !== 'ECONNREFUSED').length} lost on connections closed idle`);
  t.true(created.size > 64);
  t.true(across > 0, 'the signal came while claims were in flight');

  const cut = operations.filter((o) => created.get(o.key) !== o.id);
  t.deepEqual(cut.map((o) => o.key), [], 'every stored claim was answered 201 with its operation');
  t.deepEqual([...created.keys()].filter((k) => !stored.has(k)), [], 'every claim answered 201 is stored');

  // No reset for a request the server received. A connection refused is a request never received;
  // the one other failure a keep-alive client can see is a request sent on a connection just as the
  // server closed it idle (RFC 9112 §9.3.1: a client may retry it), and such a request left nothing.
  const failed = answers.filter((a) => a.error !== undefined && a.error !== 'ECONNREFUSED');
  t.deepEqual(failed.filter((a) => !a.reusedSocket || stored.has(a.key)).map((a) => `${a.key}: ${a.error}`), [],
    'no request the server took was reset');
  t.true(failed.length <= 8, `${failed.length} requests lost on connections closed idle: ${failed.map((a) => a.error).join(', ')}`);
  const other = answers.filter((a) => a.status !== undefined && a.status !== 201);
  t.deepEqual(other.map((a) => `${a.key}: ${a.status} ${a.body?.error?.code}`), [], 'every received claim was worked to its end');
});

/** Writes `head` on a fresh connection and reads until the server closes it. */
function rawConnection(url: URL) {
  const socket = net.connect({ port: Number(url.port), host: url.hostname });
  const chunks: Buffer[] = [];
  let error: string | null = null;
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const closed = new Promise<{ text: string; error: string | null }>((resolve) => socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), error })));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed, connected };
}

test('[sqlite] a claim still uploading its body when SIGTERM comes is answered, then the connection closed; an idle keep-alive connection does not hold the stop', async (t) => {
  t.timeout(60_000);
  const { dir, server, url } = await serveFresh(t);
  const apiKey = await addPrincipal(dir, 'acme', ['gateway']);

  // An idle keep-alive connection: one answered request, then nothing.
  const idle = rawConnection(url);
  await idle.connected;
  idle.socket.write(`GET /v1/healthz HTTP/1.1\r\nhost: x\r\n\r\n`);
  // The uploading one: headers and half its body now, the rest after the signal.
  const body = JSON.stringify({ method: 'POST', route: '/tickets', command: { title: 'half a body' } });
  const uploading = rawConnection(url);
  await uploading.connected;
  uploading.socket.write(`POST /v1/operations HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\nidempotency-key: upload-1\r\n`
    + `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`);
  await new Promise((r) => setTimeout(r, 300));

  server.process.child.kill('SIGTERM');
  const idleEnd = await idle.closed;
  t.is(parseAnswers(idleEnd.text)[0]?.status, 200);
  t.is(idleEnd.error, null, 'the idle connection was closed, not reset');
  await new Promise((r) => setTimeout(r, 300));
  t.true(server.process.alive, 'the stop waits for the request still arriving');
  uploading.socket.write(body.slice(20));
  const uploaded = await uploading.closed;
  const [answer, ...more] = parseAnswers(uploaded.text);
  t.is(answer?.status, 201, uploaded.text);
  t.is(answer?.headers.connection, 'close');
  t.deepEqual(more, []);
  t.is(uploaded.error, null);
  const started = performance.now();
  t.deepEqual(await server.process.exited, { code: 0, signal: null }, server.process.stderr);
  t.true(performance.now() - started < 3_000);
});

test('[sqlite] a second SIGTERM during the drain stops the server at once', async (t) => {
  t.timeout(60_000);
  const { server, url } = await serveFresh(t, ['--request-deadline', '30s']);
  const stalled = rawConnection(url);
  await stalled.connected;
  stalled.socket.write(`POST /v1/operations HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${server.adminKey}\r\nidempotency-key: s-1\r\n`
    + `content-type: application/json\r\ncontent-length: 100\r\n\r\n{`);
  await new Promise((r) => setTimeout(r, 300));
  server.process.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  t.true(server.process.alive, 'the first signal waits for the request in flight');
  const started = performance.now();
  server.process.child.kill('SIGTERM');
  const exited = await server.process.exited;
  t.true(performance.now() - started < 3_000);
  t.deepEqual(exited, { code: 143, signal: null }, 'a forced stop exits 128 + SIGTERM, not 0');
  stalled.socket.destroy();
});
