// One proxy environment, every part its own process: the test upstream, a real `gatehouse serve`
// and `gatehouse proxy` in front of the upstream, as an operator would run them.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GatehouseClient } from '../../src/client/index.js';
import {
  BIN,
  ManagedProcess,
  addPrincipalWith,
  spawnGatehouse,
  startScript,
  tempDir,
  type SpawnedGatehouse,
} from '../helpers/server-process.js';

export const ACCOUNT = 'acme';

export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body: string;
}

export interface ProxyEnv {
  tmp: string;
  storeArgs: string[];
  gatehouse: SpawnedGatehouse;
  gatewayKey: string;
  approverKey: string;
  adminKey: string;
  admin: GatehouseClient;
  upstream: { url: string; port: number; process: ManagedProcess };
  proxy: { url: string; port: number; process: ManagedProcess };
  keysFile: string;
  /** What reached the upstream since it (re)started, GETs to /_requests aside. */
  seen(): Promise<Seen[]>;
  writes(pathPrefix: string): Promise<Seen[]>;
  startProxy(extra?: string[], port?: number): Promise<ProxyEnv['proxy']>;
  restartUpstream(): Promise<void>;
  close(): Promise<void>;
}

export async function startUpstream(port = 0): Promise<ProxyEnv['upstream']> {
  const proc = startScript('test/proxy/upstream-server.ts', ['--port', String(port)]);
  const [, url] = await proc.waitFor(/upstream listening on (http:\/\/\S+)/, 30_000);
  return { url: url!, port: Number(new URL(url!).port), process: proc };
}

export async function startProxyEnv(options: { config?: object; storeArgs?: string[]; proxyArgs?: string[] } = {}): Promise<ProxyEnv> {
  const { dir: tmp, cleanup } = tempDir('gatehouse-proxy-');
  const storeArgs = options.storeArgs ?? ['--data-dir', path.join(tmp, 'data')];
  const serveArgs = [...storeArgs];
  if (options.config) {
    const file = path.join(tmp, 'policies.json');
    writeFileSync(file, JSON.stringify(options.config));
    serveArgs.push('--config', file);
  }
  const [gatehouse, upstream] = await Promise.all([spawnGatehouse({ args: serveArgs }), startUpstream()]);
  const [gatewayKey, approverKey] = await Promise.all([
    addPrincipalWith(storeArgs, ACCOUNT, ['gateway']),
    addPrincipalWith(storeArgs, ACCOUNT, ['approver']),
  ]);
  const admin = new GatehouseClient({ baseUrl: gatehouse.url, apiKey: gatehouse.adminKey! });
  // Pinned at "deployment": the keys as they are now, saved to a file the proxy reads.
  const keysFile = path.join(tmp, 'pinned-keys.json');
  writeFileSync(keysFile, JSON.stringify({ keys: await admin.keys() }));

  const env: ProxyEnv = {
    tmp, storeArgs, gatehouse, gatewayKey, approverKey, adminKey: gatehouse.adminKey!, admin, upstream, keysFile,
    proxy: undefined as unknown as ProxyEnv['proxy'],
    async seen() {
      const res = await fetch(`${env.upstream.url}/_requests`);
      return (await res.json()) as Seen[];
    },
    async writes(prefix) {
      return (await env.seen()).filter((s) => s.method !== 'GET' && s.url.startsWith(prefix));
    },
    async startProxy(extra = [], port = 0) {
      const upstreamArgs = extra.includes('--upstream') ? [] : ['--upstream', env.upstream.url];
      const keysArgs = extra.includes('--keys') ? [] : ['--keys', keysFile];
      const args = [BIN, 'proxy', ...upstreamArgs, '--gatehouse', gatehouse.url, ...keysArgs, '--port', String(port), ...(options.proxyArgs ?? []), ...extra];
      const proc = new ManagedProcess('gatehouse proxy', args, { env: { GATEHOUSE_API_KEY: gatewayKey, GATEHOUSE_LOG_LEVEL: 'info' } });
      const [, url] = await proc.waitFor(/gatehouse proxy listening on (http:\/\/\S+)/, 30_000);
      return { url: url!, port: Number(new URL(url!).port), process: proc };
    },
    async restartUpstream() {
      await env.upstream.process.kill9();
      env.upstream = await startUpstream(env.upstream.port);
    },
    async close() {
      await Promise.all([env.proxy?.process.stop(), env.upstream.process.stop(), gatehouse.stop()]);
      cleanup();
    },
  };
  env.proxy = await env.startProxy();
  return env;
}

export interface ProxyAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** A request to the proxy as an agent would send it (curl-like: one request, the whole answer). */
export async function call(
  baseUrl: string, method: string, route: string,
  options: { key?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<ProxyAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['idempotency-key'] = options.key;
  let body: string | Uint8Array<ArrayBuffer> | undefined = typeof options.rawBody === 'string' ? options.rawBody : options.rawBody ? new Uint8Array(options.rawBody) : undefined;
  if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(baseUrl + route, { method, headers, body, redirect: 'manual', signal: options.signal ?? AbortSignal.timeout(60_000) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** Polls until `check` answers a value (not undefined), up to a generous bound for a loaded machine. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
