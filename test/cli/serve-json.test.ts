import net from 'node:net';
import test from 'ava';
import { BIN, freePort, ManagedProcess, tempDir } from '../helpers/server-process.js';

test('serve --json prints the admin key and the listening address as JSON lines, nothing else on stdout', async (t) => {
  const { dir, cleanup } = tempDir();
  t.teardown(cleanup);
  const serve = new ManagedProcess('gatehouse serve --json', [BIN, 'serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--json'], { env: { GATEHOUSE_LOG_LEVEL: 'info' } });
  t.teardown(() => serve.stop());
  await serve.waitFor(/"url":/);
  const lines = serve.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.is(lines.length, 2, serve.stdout);
  const [made, listening] = lines as [Record<string, unknown>, Record<string, unknown>];
  t.regex(String(made.admin_key), /^gh_[A-Za-z0-9_-]{43}$/);
  t.is(made.data_dir, dir);
  t.regex(String(listening.url), /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(listening.store, 'sqlite');
  t.is(listening.ledger_id, made.ledger_id);
  t.regex(String(listening.metrics_url), /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const health = await fetch(`${String(listening.url)}/v1/healthz`);
  t.is(health.status, 200);
  // The service's own log lines (here the stop's) go to stderr, never between those JSON lines.
  await serve.stop();
  t.is(serve.stdout.trim().split('\n').length, 2, serve.stdout);
  t.regex(serve.stderr, /"msg":"stopping/);
});

test('serve whose --metrics-port is taken exits 2 with one line, leaving nothing listening (not a service half up)', async (t) => {
  const { dir, cleanup } = tempDir();
  t.teardown(cleanup);
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const metricsPort = (taken.address() as net.AddressInfo).port;
  const port = await freePort();
  const serve = new ManagedProcess('gatehouse serve', [BIN, 'serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort)]);
  t.teardown(() => serve.stop());
  const exited = await Promise.race([serve.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000))]);
  t.truthy(exited, 'serve exited by itself');
  t.is(exited?.code, 2);
  t.regex(serve.stderr, /^gatehouse: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/);
  t.notRegex(serve.stdout, /listening/);
  await t.throwsAsync(fetch(`http://127.0.0.1:${port}/v1/healthz`), undefined, 'the service port is not left listening');
});
