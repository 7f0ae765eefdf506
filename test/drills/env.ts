// One drill environment: a real `gatehouse serve`, the example ticket API and the example gateway,
// each its own process, with a cutting proxy in front of the gateway (agent → proxy → gateway)
// and one in front of Gatehouse (gateway → proxy → Gatehouse).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { GatehouseClient } from '../../src/client/index.js';
import {
  addPrincipal,
  freePort,
  startExample,
  startGatehouse,
  stopAll,
  tempDir,
  verifyDb,
  type GatehouseServer,
  type ManagedProcess,
} from '../helpers/server-process.js';
import { CuttingProxy } from './cutting-proxy.js';

export const ACCOUNT = 'acme';

export interface DrillEnv {
  tmp: string;
  gatehouse: GatehouseServer;
  gatewayKey: string;
  approverKey: string;
  keysFile: string;
  tickets: { url: string; process: ManagedProcess };
  gateway: { url: string; port: number; process: ManagedProcess };
  /** agent → this → gateway */
  agentProxy: CuttingProxy;
  /** gateway → this → Gatehouse */
  gatehouseProxy: CuttingProxy;
  admin: GatehouseClient;
  gatewayClient: GatehouseClient;
  approver: GatehouseClient;
  gatewayArgs: string[];
  restartGateway(kill9?: boolean): Promise<void>;
  count(kind: string, tag: string): Promise<number>;
  post(path: string, body: unknown, headers?: Record<string, string>, via?: 'proxy' | 'direct'): Promise<DrillResponse>;
  verify(): Promise<{ code: number | null; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export interface DrillResponse {
  status: number;
  outcome: string | null;
  replayed: boolean;
  operationId: string | null;
  body: any;
  headers: Headers;
}

export async function startDrillEnv(options: { config?: object; leaseSeconds?: number; waitMs?: number } = {}): Promise<DrillEnv> {
  const { dir: tmp, cleanup } = tempDir('gatehouse-drill-');
  const gatehouse = await startGatehouse({ dataDir: path.join(tmp, 'data'), config: options.config });
  const gatewayKey = await addPrincipal(gatehouse.dataDir, ACCOUNT, ['gateway']);
  const approverKey = await addPrincipal(gatehouse.dataDir, ACCOUNT, ['approver']);
  // Pinned at "deployment": the keys as they are now, saved to a file the gateway reads.
  const keys = await (await fetch(`${gatehouse.url}/v1/keys`)).json();
  const keysFile = path.join(tmp, 'pinned-keys.json');
  writeFileSync(keysFile, JSON.stringify(keys));

  const gatehouseProxy = new CuttingProxy(gatehouse.url);
  await gatehouseProxy.listen();
  const tickets = await startExample('ticket-api.ts', []);
  const gatewayArgs = [
    '--gatehouse', gatehouseProxy.url,
    '--public-url', gatehouse.url,
    '--api-key', gatewayKey,
    '--upstream', tickets.url,
    '--keys', keysFile,
    '--key-store', path.join(tmp, 'gateway-keys.db'),
    '--wait-ms', String(options.waitMs ?? 8000),
    '--timeout-ms', '5000',
  ];
  if (options.leaseSeconds) gatewayArgs.push('--lease-seconds', String(options.leaseSeconds));
  const gatewayPort = await freePort();
  let gateway = await startExample('gateway.ts', gatewayArgs, { port: gatewayPort });
  const agentProxy = new CuttingProxy(gateway.url);
  await agentProxy.listen();

  const env: DrillEnv = {
    tmp,
    gatehouse,
    gatewayKey,
    approverKey,
    keysFile,
    tickets,
    get gateway() {
      return gateway;
    },
    agentProxy,
    gatehouseProxy,
    admin: new GatehouseClient({ baseUrl: gatehouse.url, apiKey: gatehouse.adminKey }),
    gatewayClient: new GatehouseClient({ baseUrl: gatehouse.url, apiKey: gatewayKey }),
    approver: new GatehouseClient({ baseUrl: gatehouse.url, apiKey: approverKey }),
    gatewayArgs,
    async restartGateway(kill9 = false) {
      if (kill9) await gateway.process.kill9();
      else await gateway.process.stop();
      // Same port, same key store: the agent's proxy keeps pointing at it.
      gateway = await startExample('gateway.ts', gatewayArgs, { port: gatewayPort });
    },
    async count(kind: string, tag: string) {
      const res = await fetch(`${tickets.url}/${kind}?tag=${encodeURIComponent(tag)}`);
      return ((await res.json()) as { count: number }).count;
    },
    async post(route, body, headers = {}, via = 'proxy') {
      const base = via === 'proxy' ? agentProxy.url : gateway.url;
      const res = await fetch(base + route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      return {
        status: res.status,
        outcome: res.headers.get('gatehouse-outcome'),
        replayed: res.headers.get('idempotent-replayed') === 'true',
        operationId: res.headers.get('gatehouse-operation'),
        body: parsed,
        headers: res.headers,
      };
    },
    verify: () => verifyDb(gatehouse.dbPath, ['--keys', keysFile]),
    async close() {
      await Promise.all([agentProxy.close(), gatehouseProxy.close()]);
      await stopAll();
      if (!process.env.KEEP_DRILL_DIRS) cleanup();
    },
  };
  return env;
}

/** The closing check of every drill: the count of written items, and `gatehouse verify` exits 0. */
export async function afterDrill(t: ExecutionContext, env: DrillEnv, kind: string, tag: string, expected: number): Promise<void> {
  t.is(await env.count(kind, tag), expected, `${kind} items tagged ${tag}`);
  const v = await env.verify();
  t.is(v.code, 0, `gatehouse verify --db exits 0\nstdout: ${v.stdout}\nstderr: ${v.stderr}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value or the time is up. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000, intervalMs = 200): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}
