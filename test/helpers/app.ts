import type { ExecutionContext } from 'ava';
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

/** The real service on loopback over a real store; torn down when the test ends. */
export async function startTestApp(
  t: ExecutionContext | null, kind: StoreKind, options: { clock?: Clock; maxBodyBytes?: number } = {},
): Promise<TestApp> {
  const store = await createTestStore(kind);
  const context = await openContext(store.config, { clock: options.clock });
  const adminKey = (await createFirstAdmin(context))!;
  const server = await startServer(context, { host: '127.0.0.1', port: 0, maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024 });
  const app: TestApp = {
    store, context, server, url: server.url, adminKey,
    keyFor: async (account, ...roles) => (await context.principals.create({ account_id: account, roles })).key,
    request: (method, path, requestOptions = {}) => httpRequest(server.url, method, path, requestOptions),
    close: async () => {
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
