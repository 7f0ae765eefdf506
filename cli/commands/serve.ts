import { constants as osConstants } from 'node:os';
import type { CommandModule } from 'yargs';
import { readConfig } from '../../src/config/config.js';
import { createFirstAdmin, createKeys, needsInitialisation } from '../../src/bootstrap.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';
import { givenAs, portArg, print, runVerb, storeOptions, storeOptionsOf, UsageError, type StoreArgs } from '../output.js';
import { urlOption } from '../url-option.js';

interface ServeArgs extends StoreArgs {
  host: string;
  port: number;
  config?: string;
  'max-body': string;
  'trusted-proxies': number;
  'metrics-host'?: string;
  'metrics-port'?: number;
  witness?: string[];
  'witness-quorum'?: number;
  'request-deadline': string;
  'max-in-flight': number;
  'max-in-flight-per-client'?: number;
  'max-connections': number;
  'public-url'?: string;
}

export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve',
  describe: 'run the HTTP service (initialises an empty data dir first)',
  builder: (y) => y.options({
    ...storeOptions,
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'number', default: 8080 },
    config: { type: 'string', describe: 'policies file (JSON)' },
    'max-body': { type: 'string', default: '1mb', describe: 'largest request body, e.g. 512kb or 1mb (1mb = 1 MiB)' },
    'trusted-proxies': {
      type: 'number', default: 0,
      describe: 'reverse proxies in front that append to X-Forwarded-For and set X-Forwarded-Proto (the sign-in throttle counts the client they saw; the session cookie is Secure when they saw https); 0 trusts no header',
    },
    'metrics-host': { type: 'string', describe: 'also serve GET /metrics without a key on this address (with --metrics-port); keep it private' },
    'metrics-port': { type: 'number', describe: 'port of the unauthenticated metrics listener (default 9464 when --metrics-host is given)' },
    witness: { type: 'string', array: true, describe: 'URL=VERIFIER_KEY of a C2SP tlog-witness to send every new checkpoint to; repeatable' },
    'witness-quorum': { type: 'number', describe: 'cosignatures a checkpoint needs to count as witnessed (default 1); below it the service logs a warning' },
    'request-deadline': { type: 'string', default: '10s', describe: 'no request is worked on longer than this; past it the answer is 503 (e.g. 10s, 2500ms)' },
    'max-in-flight': { type: 'number', default: DEFAULT_LIMITS.maxInFlight, describe: 'requests worked on at once; past it new ones are answered 503 overloaded before their body is read' },
    'max-in-flight-per-client': { type: 'number', describe: 'requests one client (API key, else address) may have in flight (default: half of --max-in-flight)' },
    'max-connections': { type: 'number', default: DEFAULT_LIMITS.maxConnections, describe: 'open connections; past it idle ones are closed and requests answered 503 overloaded' },
    'public-url': { type: 'string', describe: 'where people reach this service, e.g. https://gatehouse.example.com: the base of the approver-page links in approval webhooks (default: http://HOST:PORT it listens on)' },
  }),
  handler: (args) => runVerb(async () => {
    // Loaded here, not at the top: other verbs start without Koa, Kysely and the drivers.
    const [{ openContext }, { startServer }, { parseByteSize }, { Policies }, { parseDuration }] = await Promise.all([
      import('../../src/context.js'), import('../../src/http/server.js'),
      import('../../src/config/byte-size.js'), import('../../src/policies/policies.js'), import('../../src/config/duration.js'),
    ]);
    portArg('--port', args.port);
    const trustedProxies = args['trusted-proxies'];
    if (!Number.isInteger(trustedProxies) || trustedProxies < 0 || trustedProxies > 10) {
      throw new UsageError(`--trusted-proxies must be a whole number from 0 to 10${givenAs(trustedProxies)}`);
    }
    const limits = {
      requestDeadlineMs: durationArg('--request-deadline', args['request-deadline'], parseDuration),
      maxInFlight: countArg('--max-in-flight', args['max-in-flight']),
      maxInFlightPerClient: args['max-in-flight-per-client'] === undefined ? undefined : countArg('--max-in-flight-per-client', args['max-in-flight-per-client']),
      maxConnections: countArg('--max-connections', args['max-connections']),
    };
    let maxBodyBytes: number;
    try {
      maxBodyBytes = parseByteSize(args['max-body']);
    } catch (error) {
      throw new UsageError(`--max-body: ${(error as Error).message}`);
    }
    const metricsPort = args['metrics-port'] ?? (args['metrics-host'] !== undefined ? 9464 : undefined);
    if (metricsPort !== undefined) portArg('--metrics-port', metricsPort);
    const metrics = metricsPort === undefined ? undefined : { host: args['metrics-host'] ?? '127.0.0.1', port: metricsPort };
    // Links are made by appending /ui/…: the base loses its trailing slash.
    const publicUrl = args['public-url'] === undefined ? undefined : urlOption('--public-url', args['public-url']).href.replace(/\/+$/, '');
    const { parseWitnessOptions } = await import('../witness-options.js');
    const witnesses = parseWitnessOptions(args.witness ?? [], args['witness-quorum']);
    const config = readConfig({ ...storeOptionsOf(args), configFile: args.config });
    // Checked first, so a bad policies file stops start-up before an empty data dir gets its keys.
    const policies = config.policiesFile ? Policies.fromFile(config.policiesFile) : Policies.none();
    const initialise = needsInitialisation(config);
    if (initialise) createKeys(config);
    const context = await openContext(config, { policies });
    const adminKey = await createFirstAdmin(context);
    // Before the server starts: a key made now is printed even if the start then fails.
    if (adminKey) print(args, `admin key: ${adminKey}`, { admin_key: adminKey, data_dir: config.dataDir, ledger_id: context.ledgerId });
    let server;
    try {
      server = await startServer(context, { host: args.host, port: args.port, maxBodyBytes, trustedProxies, metrics, publicUrl, ...limits });
    } catch (error) {
      // A port taken: nothing was left listening, and the store is closed too, so the process ends with the error.
      await context.close();
      throw error;
    }
    let witnessing: { stop(): Promise<void> } | null = null;
    if (witnesses.targets.length > 0) {
      const { Witnessing } = await import('../../src/ledger/witnessing.js');
      const started = new Witnessing(context, witnesses.targets, witnesses.quorum);
      await started.start();
      context.metrics.sources.witnessLag = async () => started.lag();
      witnessing = started;
    }
    const listening = `gatehouse listening on ${server.url} (store: ${context.store.dialect}, ledger ${context.ledgerId})`;
    print(args, server.metricsUrl ? `${listening}\nmetrics on ${server.metricsUrl} (no key needed)` : listening,
      { url: server.url, store: context.store.dialect, ledger_id: context.ledgerId, metrics_url: server.metricsUrl });
    if (policies.webhook && publicUrl === undefined && server.listensOnEveryAddress) {
      // Only with a webhook: the links go out nowhere else, and binding every address is common.
      process.stderr.write(`gatehouse: warning: webhook links to the approver pages will point to ${server.url}, every address this service listens on, which nobody can open; give --public-url with the URL people reach it at\n`);
    }
    const stop = async () => {
      await server.close();
      // A last signed checkpoint on a clean stop, so an auditor's saved checkpoint covers everything written;
      // then the witnesses' last pass cosigns it (witnessing.ts), so verify --witness-key passes on what the stop left.
      await context.ledger.checkpointGrownChains().catch((err) => context.logger.error({ err }, 'final checkpoint failed'));
      await witnessing?.stop();
      await context.close();
    };
    // The first signal stops gracefully: requests received are answered first (server.close()),
    // which takes up to the request deadline. A second one does not wait: it exits at once,
    // 128 + the signal's number, as the signal's default action would have.
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        context.logger.warn({ signal }, 'second signal: exiting without waiting for the requests in flight');
        process.exit(128 + osConstants.signals[signal]);
      }
      stopping = true;
      context.logger.info({ signal }, 'stopping: answering the requests in flight first (signal again to exit at once)');
      void stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }),
};

function countArg(flag: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a whole number of at least 1${givenAs(value)}`);
  return value;
}

function durationArg(flag: string, value: string, parse: (text: string) => number): number {
  try {
    return parse(value);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}
