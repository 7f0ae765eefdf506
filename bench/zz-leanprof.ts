import fs from 'node:fs';
import path from 'node:path';
import { durableLoad, startChild } from './http-claims.js';
import { summariseProfile, type CpuProfile } from './profile-summary.js';
const dir = '/tmp/leanprof'; fs.rmSync(dir, { recursive: true, force: true });
const lean = await startChild('lean claim', ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import=tsx', path.resolve('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);
const rate = await durableLoad(lean.url, 50, 10, '/v1/operations');
await lean.stop();
console.log(`lean: ${rate.rps} req/s`);
for (const f of fs.readdirSync(dir)) { const { areas, functions } = summariseProfile(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile, 25); console.log(areas + '\n\n' + functions); }
