/**
 * `gatehouse witness`: a C2SP tlog-witness for Gatehouse logs (or any log whose checkpoints are
 * signed notes). A separate process a third party runs: its own key and store in --data-dir,
 * and it trusts only the log keys it is given with --log.
 */
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { portArg, UsageError, runVerb } from '../output.js';

interface WitnessArgs {
  'data-dir': string;
  host: string;
  port: number;
  log: string[];
  name?: string;
  json: boolean;
}

export const witnessCommand: CommandModule<object, WitnessArgs> = {
  command: 'witness',
  describe: 'run a transparency-log witness (C2SP tlog-witness) that cosigns checkpoints of the logs it is given',
  builder: (y) => y.options({
    'data-dir': { type: 'string', demandOption: true, describe: 'the witness\'s directory: witness.key (created on first start) and witness.db' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'number', default: 8081 },
    log: { type: 'string', array: true, demandOption: true, describe: 'ORIGIN_PREFIX=VERIFIER_KEY: cosign checkpoints whose origin starts with the prefix when this log key signed them; repeatable' },
    name: { type: 'string', describe: 'the witness name in its key and cosignatures (default gatehouse-witness/<key id>)' },
    json: { type: 'boolean', default: false, describe: 'machine-readable output' },
  }) as unknown as Argv<WitnessArgs>,
  handler: (args) => runVerb(async () => {
    const [{ parseNoteVerifier, SigningKeyError }, { loadWitnessIdentity }, { WitnessStore }, { startWitnessServer }] = await Promise.all([
      import('../../src/core/signing-key.js'), import('../../src/witness/witness-key.js'),
      import('../../src/witness/witness-store.js'), import('../../src/witness/witness-server.js'),
    ]);
    portArg('--port', args.port);
    const logs = args.log.map((spec) => {
      const eq = spec.indexOf('=');
      if (eq <= 0) throw new UsageError(`--log ${spec}: expected ORIGIN_PREFIX=VERIFIER_KEY`);
      try {
        return { originPrefix: spec.slice(0, eq), key: parseNoteVerifier(spec.slice(eq + 1)) };
      } catch (error) {
        if (error instanceof SigningKeyError) throw new UsageError(`--log ${spec.slice(0, eq)}: ${error.message}`);
        throw error;
      }
    });
    let identity;
    try {
      identity = loadWitnessIdentity(path.resolve(args['data-dir']), args.name);
    } catch (error) {
      if (error instanceof SigningKeyError) throw new UsageError(`--name: ${error.message}`);
      throw error;
    }
    const store = new WitnessStore(path.join(path.resolve(args['data-dir']), 'witness.db'));
    const server = await startWitnessServer({ identity, logs, store, now: () => Date.now() }, args.host, args.port);
    if (args.json) process.stdout.write(JSON.stringify({ witness_key: identity.verifier.text, url: server.url }) + '\n');
    else process.stdout.write(`witness key: ${identity.verifier.text}\nwitness listening on ${server.url}\n`);
    const stop = async () => {
      await server.close();
      store.close();
    };
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
  }),
};
