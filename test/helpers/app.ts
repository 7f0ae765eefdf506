import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Logger } from 'pino';
import { openContext, type AppContext } from '../../src/context.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { createFirstAdmin } from '../../src/bootstrap.js';
import type { Role } from '../../src/principals/roles.js';
import type { Clock } from '../../src/core/time.js';
import { createTestStore, type StoreKind, type TestStore } from './stores.js';

export interface TestApp {
  store: TestStore;
  context: AppContext;
  server: RunningServer;
  url: string;
  adminKey: string;
  /** A new principal's API key. */
  keyFor(account: string, ...roles: Role[]): Promise<string>;
  request(method: string, path: string, options?: { key?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> }): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestAppOptions {
  clock?: Clock;
  maxBodyBytes?: number;
  trustedProxies?: number;
  requestDeadlineMs?: number;
  logger?: Logger;
  /** A policies file's contents (`{"policies": [...]}`), written to the data dir and loaded as `serve --config` does. */
  policies?: object;
  /** An existing store (a database of an older release, say) instead of a fresh one. */
  store?: TestStore;
}

/**
 * The one way tests start the real service in-process: a real store (fresh unless given), the
 * composition root, the first admin, and HTTP on loopback; torn down when the test ends.
 */
export async function startTestApp(t: ExecutionContext | null, kind: StoreKind, options: TestAppOptions = {}): Promise<TestApp> {
  const store = options.store ?? await createTestStore(kind);
  let config = store.config;
  if (options.policies) {
    const file = path.join(store.dataDir, 'policies.json');
    fs.writeFileSync(file, JSON.stringify(options.policies, null, 2));
    config = { ...config, policiesFile: file };
  }
  const context = await openContext(config, { clock: options.clock, logger: options.logger });
  const adminKey = (await createFirstAdmin(context))!;
  const server = await startServer(context, {
    host: '127.0.0.1', port: 0, maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024, trustedProxies: options.trustedProxies,
    requestDeadlineMs: options.requestDeadlineMs,
  });
  const app: TestApp = {
    store, context, server, url: server.url, adminKey,
    keyFor: async (account, ...roles) => (await context.principals.create({ account_id: account, roles })).key,
    request: (method, path, requestOptions = {}) => httpRequest(server.url, method, path, requestOptions),
    close: async () => {
      await context.approvals.idle();
      await server.close();
      await context.close();
      await store.drop();
    },
  };
  t?.teardown(() => app.close());
  return app;
}

export async function httpRequest(
  baseUrl: string, method: string, path: string,
  options: { key?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(baseUrl + path, { method, headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
