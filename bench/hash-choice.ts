// Which SHA-256 to use for the Merkle frontier and the event hash.
//
//   npx tsx bench/hash-choice.ts
//
// Node 20.20, 2 vCPUs shared with other work (load average ~11 while this ran, so absolute
// numbers are low and noisy; the ratios held across runs), best of 3 rounds:
//
//   input                  node createHash   crypto.hash->Buffer   crypto.hash->latin1 str   @noble/hashes
//   33 B (leaf)                   321,053             613,557                 2,677,073             793,686
//   65 B (node)                   423,194             553,258                 2,077,688             537,767
//   496 B (event header)          343,108             442,402                 1,279,917             146,492
//
// Kept: node:crypto's one-shot crypto.hash with a string digest ('binary' = latin1 for the
// Merkle frontier, 'hex' for event and payload hashes). Allocating a Buffer per digest costs
// more than the hashing of these small inputs; a Hash object (createHash) costs more again.
// noble is competitive only on the 33-byte leaf and falls far behind on the header.
// src/core/merkle.ts therefore assembles 0x00‖h and 0x01‖l‖r in reused scratch buffers and
// keeps frontier hashes as 32-char latin1 strings; crypto.hash exists from Node 20.12
// (merkle.ts falls back to createHash before that).
import { createHash, hash as oneShotHash } from 'node:crypto';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

type Candidate = { name: string; run: (data: Uint8Array) => Uint8Array | string };

const candidates: Candidate[] = [
  { name: 'node createHash', run: (data) => createHash('sha256').update(data).digest() },
  { name: 'node crypto.hash -> Buffer', run: (data) => oneShotHash('sha256', data, 'buffer') },
  { name: 'node crypto.hash -> latin1 str', run: (data) => oneShotHash('sha256', data, 'binary') },
  { name: '@noble/hashes sha256', run: (data) => nobleSha256(data) },
];

function header(): Uint8Array {
  const h = {
    account_id: 'acct-1',
    actor: 'prn_7f3c2a91',
    agent_run_id: null,
    fingerprint: null,
    idempotency_key: 'refund-88123',
    method: 'POST',
    operation_id: 'op_01J9Z3W5R8',
    payload_hash: '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    prev_hash: 'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    provider_ref: null,
    response_status: null,
    route: '/v1/refunds',
    seq: 123456,
    state: 'in_progress',
    ts: '2024-11-03T10:15:30.123Z',
    type: 'attempted',
  };
  return new TextEncoder().encode('gatehouse:event:v1\n' + JSON.stringify(h));
}

const inputs: Array<[string, Uint8Array]> = [
  ['33 B (leaf)', new Uint8Array(33).fill(7)],
  ['65 B (node)', new Uint8Array(65).fill(9)],
  [`${header().length} B (event header)`, header()],
];

function first(d: Uint8Array | string): number {
  return typeof d === 'string' ? d.charCodeAt(0) : d[0]!;
}

function measure(c: Candidate, data: Uint8Array): number {
  let sink = 0;
  for (let i = 0; i < 20_000; i++) sink ^= first(c.run(data)); // warm up
  const n = 200_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink ^= first(c.run(data));
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink === 0x1234) console.log(''); // keep the result alive
  return (n * 1e9) / ns;
}

// Best of 3 rounds, candidates interleaved, so a busy machine skews them alike.
for (const [label, data] of inputs) {
  for (const c of candidates) {
    let ops = 0;
    for (let round = 0; round < 3; round++) ops = Math.max(ops, measure(c, data));
    console.log(`${label.padEnd(24)} ${c.name.padEnd(30)} ${Math.round(ops).toLocaleString('en-US').padStart(12)} ops/s`);
  }
}
