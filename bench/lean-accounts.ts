// The lean claim's server CPU per claim with every claim in one account against the same claims
// spread over the four accounts the product's load uses (newKeyLoad's API keys, in rotation):
// how much of the floor is the accounts' chains and index ranges. Interleaved turns, one server.
//
//   node --import=tsx bench/lean-accounts.ts [--seconds 5] [--rounds 4]
import { parseArgs } from 'node:util';
import { cpuPerAnswer } from './cpu-usage.js';
import { leanLoad, startChild } from './http-claims.js';
import { compiledScript } from './compiled.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '4' } } });
const seconds = Number(values.seconds);
const lean = await startChild('lean claim', [compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);

try {
  await leanLoad(lean.url, 50, 2);
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, run] of [['1 account ', () => leanLoad(lean.url, 50, seconds, { oneAccount: true })], ['4 accounts', () => leanLoad(lean.url, 50, seconds)]] as const) {
      const { result, server_cpu_us } = await cpuPerAnswer(lean.pid, run, (rate) => rate.rps);
      console.log(`lean claim, ${name}: ${Math.round(result.rps)} req/s, server CPU ${server_cpu_us} us per claim`);
    }
  }
} finally {
  await lean.stop();
}
