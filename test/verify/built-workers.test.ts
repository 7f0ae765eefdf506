import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { assertBuilt } from '../helpers/built.js';
import { ROOT } from '../helpers/server-process.js';
import { ACCOUNT, createLedger, tamperSqlite } from './ledger-fixture.js';

/**
 * The parallel SQLite verify from the built JavaScript, in a plain `node` with no loader: its
 * slices run on worker threads started from dist/ (sqlite-slice-worker.js). A worker that cannot
 * start or fails makes verifySlices hand its slices back to the reference path (`done: false`)
 * and `gatehouse verify` would still answer right, only slower, so the CLI's exit code cannot
 * show it: this asks verifySlices itself.
 */

const SCRIPT = `
import { createRequire } from 'node:module';
const [root, file, dataDir, account] = process.argv.slice(2);
const dist = (m) => import(root + '/dist/src/verify/' + m + '.js');
const [{ SqliteLedgerReader }, { VerificationRun }, { SliceWorkers, verifySlices }, { keysFromDataDir }] = await Promise.all([
  dist('sqlite-reader'), dist('run'), dist('sqlite-slices'), dist('trust'),
]);
const BetterSqlite3 = createRequire(root + '/package.json')('better-sqlite3');
const { PAGE_ROWS } = await import(root + '/dist/src/config/verify-tuning.js');
const settings = { threads: 3, minEvents: 2, sliceEvents: 5, mainShare: 1, pageRows: PAGE_ROWS, schedule: 'alternate' };
const reader = SqliteLedgerReader.open(file, settings);
const run = new VerificationRun({ trustedKeys: keysFromDataDir(dataDir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
const own = new BetterSqlite3(file, { readonly: true });
const workers = SliceWorkers.start(file, settings.threads - 1);
const outcome = await verifySlices({ workers, db: own, run, start: { accountId: account, checkpoints: [] }, maxSeq: 30, dataKey: null, settings });
await workers.terminate();
run.finish();
own.close();
await reader.close();
console.log(JSON.stringify(outcome));
`;

test('the built verify checks slices on worker threads from dist/, with no TypeScript loader', async (t) => {
  assertBuilt();
  const ledger = await createLedger('sqlite');
  t.teardown(() => ledger.store.drop());
  await ledger.append(30);
  await ledger.close();
  const file = (ledger.store.config.store as { file: string }).file;
  // A file, not --eval: a worker inherits its parent's execArgv, and --input-type would break it.
  const script = path.join(ledger.store.dataDir, 'verify-slices.mjs');
  writeFileSync(script, SCRIPT);
  const slices = async () => {
    // No NODE_OPTIONS: nothing but node and dist/.
    const { NODE_OPTIONS: _, ...env } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, [script, ROOT, file, ledger.store.dataDir, ACCOUNT], { cwd: ROOT, env });
    return JSON.parse(stdout) as unknown;
  };
  t.deepEqual(await slices(), { done: true }, 'two workers took their slices whole');
  // Seq 8 is in the first worker's first slice (6..10): it stops there and the reference path takes over after 7.
  tamperSqlite(file, (db) => db.prepare('UPDATE events SET route = ? WHERE account_id = ? AND seq = 8').run('/v1/other', ACCOUNT));
  t.deepEqual(await slices(), { done: false, after: 7 });
});
