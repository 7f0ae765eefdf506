import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { readProxyEnv } from '../../src/config/config.js';
import { DEFAULT_MAX_BODY } from '../../src/proxy/options.js';
import { portArg, print, runVerb, UsageError } from '../output.js';
import { urlOption } from '../url-option.js';
import { parseStrictJson } from '../../src/core/strict-json.js';
import type { PinnedKeysInput } from '../../src/client/grant.js';

interface ProxyArgs {
  upstream: string;
  gatehouse: string;
  'api-key'?: string;
  keys?: string;
  host: string;
  port: number;
  routes?: string;
  timeout: string;
  lease: string;
  'public-url'?: string;
  'max-body': string;
  'max-response': string;
  json: boolean;
}

/**
 * `gatehouse proxy` (docs/proxy.md): Gatehouse in front of any HTTP API. Agents point at the
 * proxy instead of the API and add one header, `Idempotency-Key`; every gated write is claimed,
 * forwarded at most once, recorded, and replayed to retries. See docs/proxy.md.
 */
export const proxyCommand: CommandModule<object, ProxyArgs> = {
  command: 'proxy',
  describe: 'a reverse proxy that claims every write with the caller\'s Idempotency-Key and forwards it once',
  builder: (y) => y.options({
    upstream: { type: 'string', demandOption: true, describe: 'the API to put Gatehouse in front of, e.g. http://127.0.0.1:9100' },
    gatehouse: { type: 'string', demandOption: true, describe: 'Gatehouse\'s URL, e.g. http://127.0.0.1:8080' },
    'api-key': { type: 'string', describe: 'a key with the gateway role (or GATEHOUSE_API_KEY)' },
    keys: { type: 'string', describe: 'the GET /v1/keys JSON saved at deployment: grants are checked against it (without it, approved writes are refused)' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'number', default: 8090 },
    routes: { type: 'string', describe: 'routes file {"routes": [{"method", "route", "gated"}]}; default: POST, PUT, PATCH and DELETE are gated' },
    timeout: { type: 'string', default: '30s', describe: 'upstream timeout (connection and answer), e.g. 30s or 500ms' },
    lease: { type: 'string', default: '60s', describe: 'lease asked for on each claim; heartbeats renew it while the upstream works' },
    'public-url': { type: 'string', describe: 'where people open Gatehouse\'s approval pages, when not --gatehouse' },
    'max-body': { type: 'string', default: DEFAULT_MAX_BODY, describe: 'largest gated request body (keep it 64kb below the service\'s --max-body: the claim wraps it)' },
    'max-response': { type: 'string', default: '1mb', describe: 'largest upstream answer to a gated write stored with its body for replays (a larger one is streamed to its caller and stored without its body)' },
    json: { type: 'boolean', default: false, describe: 'machine-readable start line' },
  }),
  handler: (args) => runVerb(async () => {
    const [{ startProxy }, { parseDuration }, { loadRoutesFile, defaultGate, RoutesFileError }, { parseByteSize }] = await Promise.all([
      import('../../src/proxy/server.js'), import('../../src/proxy/options.js'), import('../../src/proxy/routes-file.js'), import('../../src/config/byte-size.js'),
    ]);
    const env = readProxyEnv();
    const apiKey = args['api-key'] ?? env.apiKey;
    if (!apiKey) throw new UsageError('--api-key (or GATEHOUSE_API_KEY) is required: a key with the gateway role');
    const upstream = urlOption('--upstream', args.upstream);
    urlOption('--gatehouse', args.gatehouse);
    if (args['public-url'] !== undefined) urlOption('--public-url', args['public-url']);
    portArg('--port', args.port);
    const timeoutMs = usage('--timeout', () => parseDuration(args.timeout));
    const leaseMs = usage('--lease', () => parseDuration(args.lease));
    const leaseSeconds = Math.ceil(leaseMs / 1000);
    if (leaseSeconds < 1 || leaseSeconds > 3600) throw new UsageError('--lease must be from 1s to 3600s (the service\'s bounds)');
    const maxBodyBytes = usage('--max-body', () => parseByteSize(args['max-body']));
    const maxResponseBytes = usage('--max-response', () => parseByteSize(args['max-response']));
    let gate;
    try {
      gate = args.routes ? loadRoutesFile(args.routes, (message) => process.stderr.write(`gatehouse proxy: warning: ${message}\n`)) : defaultGate();
    } catch (error) {
      if (error instanceof RoutesFileError) throw new UsageError(error.message);
      throw error;
    }
    const pinnedKeys = args.keys ? usage('--keys', () => parseStrictJson(readFileSync(args.keys!)) as PinnedKeysInput) : undefined;
    const quiet = env.logLevel === 'silent';
    const log = (message: string, fields?: Record<string, unknown>) => {
      if (!quiet) process.stderr.write(`gatehouse proxy: ${message}${fields ? ' ' + JSON.stringify(fields) : ''}\n`);
    };
    if (!pinnedKeys) process.stderr.write('gatehouse proxy: no --keys: writes that need approval will be refused (grant_invalid), never forwarded unchecked\n');
    const proxy = await startProxy({
      upstream, gatehouse: args.gatehouse, publicUrl: args['public-url'], apiKey, pinnedKeys, gate,
      timeoutMs, leaseSeconds, maxBodyBytes, maxResponseBytes, log,
    }, { host: args.host, port: args.port });
    print(args, `gatehouse proxy listening on ${proxy.url} (upstream ${upstream.href}, gatehouse ${args.gatehouse})`,
      { url: proxy.url, upstream: upstream.href, gatehouse: args.gatehouse });
    const stop = () => void proxy.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }),
};

function usage<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}
