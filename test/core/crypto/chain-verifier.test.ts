import test from 'ava';
import type { MasterKey } from '../../../src/core/account-data-key.js';
import { type AccountVerdict, ChainVerifier } from '../../../src/core/chain-verifier.js';
import type { VerifierCheckpoint } from '../../../src/core/checkpoint-trust.js';
import { checkEventRow, eventHash } from '../../../src/core/event-hash.js';
import { EVENT_HEADER_FIELDS, type EventHeader, GENESIS_PREV_HASH } from '../../../src/core/event-shape.js';
import { sha256Hex } from '../../../src/core/hash.js';
import { MerkleFrontier, SubtreeRange, leafHash } from '../../../src/core/merkle.js';
import { checkpointBody, signNote } from '../../../src/core/note.js';
import { generateKey, sealPayload, wrapDataKey } from '../../../src/core/seal.js';
import { type SigningKey, generateSeed, noteVerifierKey, signingKeyFromSeed } from '../../../src/core/signing-key.js';
import { loadSodium } from '../../../src/core/sodium.js';
import type { VerifierEvent } from '../../../src/core/verifier-event.js';

const sodium = await loadSodium();
const LEDGER = 'L1';
const ACCOUNT = 'acct-1';
const logKey = signingKeyFromSeed(generateSeed(), `gatehouse/${LEDGER}`);
const masterKey: MasterKey = { bytes: generateKey(sodium), sodium };
const dataKey = generateKey(sodium);
const wrappedDataKey = wrapDataKey(sodium, masterKey.bytes, ACCOUNT, dataKey);

function header(seq: number, prev: string, payload: Uint8Array | null): EventHeader {
  return {
    seq,
    account_id: ACCOUNT,
    ts: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
    type: seq % 3 === 0 ? 'completed' : 'attempted',
    operation_id: `op-${Math.ceil(seq / 3)}`,
    idempotency_key: `key-${seq}`,
    fingerprint: sha256Hex(`fp ${seq}`),
    actor: 'prn-1',
    agent_run_id: seq % 2 === 0 ? 'run-1' : null,
    method: 'POST',
    route: '/v1/refunds',
    state: seq % 3 === 0 ? 'completed' : 'in_progress',
    provider_ref: null,
    response_status: seq % 3 === 0 ? 201 : null,
    payload_hash: payload === null ? null : sha256Hex(payload),
    prev_hash: prev,
  };
}

/** Re-link events from index `from` on: recompute prev_hash and hash (what a forger with DB access does). */
function rechain(events: VerifierEvent[], from = 0): void {
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    e.header = { ...e.header, prev_hash: i === 0 ? GENESIS_PREV_HASH : events[i - 1]!.hash };
    e.hash = eventHash(e.header);
  }
}

function checkpointAt(events: VerifierEvent[], size: number, key: SigningKey = logKey, account = ACCOUNT): VerifierCheckpoint {
  const f = new MerkleFrontier();
  for (const e of events.slice(0, size)) f.append(leafHash(Buffer.from(e.hash, 'hex')));
  const root = f.root();
  return { tree_size: size, root_hash: root.toString('hex'), note: signNote(checkpointBody(`gatehouse/${LEDGER}/${account}`, size, root), key) };
}

function buildChain(n: number): VerifierEvent[] {
  const events: VerifierEvent[] = [];
  let prev = GENESIS_PREV_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const payload = seq % 4 === 0 ? null : sealPayload(sodium, dataKey, ACCOUNT, seq, new TextEncoder().encode(`{"n":${seq}}`));
    const h = header(seq, prev, payload);
    prev = eventHash(h);
    events.push({ header: h, hash: prev, payload });
  }
  return events;
}

interface RunOptions {
  checkpoints?: VerifierCheckpoint[];
  given?: VerifierCheckpoint[];
  order?: 'checkpoints-first' | 'announced' | 'interleaved';
  withMasterKey?: boolean;
  wrapped?: Uint8Array | null;
}

/** The event as a database row (src/verify/columns.ts order), for ChainVerifier.addRow. */
function toRow(e: VerifierEvent): unknown[] {
  const h = e.header as unknown as Record<string, unknown>;
  return [...EVENT_HEADER_FIELDS.map((f) => h[f]), e.hash, e.payload];
}

/** A header with exactly the contract's fields, none undefined: what a database row can hold. */
function rowShaped(e: VerifierEvent): boolean {
  const h = e.header as unknown as Record<string, unknown> | null;
  if (h === null || typeof h !== 'object') return false;
  const keys = Object.keys(h);
  return keys.length === EVENT_HEADER_FIELDS.length && EVENT_HEADER_FIELDS.every((f) => Object.hasOwn(h, f) && h[f] !== undefined);
}

/**
 * Both feeding paths (addEvent with header objects, addRow with database rows) must reach the
 * same verdict on every input: every test that verifies through here checks the fast path too.
 */
function verify(events: VerifierEvent[], opts: RunOptions = {}): AccountVerdict {
  const byEvent = verifyVia(events, opts, false);
  if (!events.every(rowShaped)) return byEvent;
  const byRow = verifyVia(events, opts, true);
  if (JSON.stringify(byRow) !== JSON.stringify(byEvent)) {
    throw new Error(`addRow and addEvent disagree: ${JSON.stringify(byRow)} vs ${JSON.stringify(byEvent)}`);
  }
  return byEvent;
}

function verifyVia(events: VerifierEvent[], opts: RunOptions, rows: boolean): AccountVerdict {
  const v = new ChainVerifier({
    accountId: ACCOUNT,
    trustedKeys: [noteVerifierKey(logKey)],
    ledgerId: LEDGER,
    ...(opts.withMasterKey ? { masterKey, wrappedDataKey: opts.wrapped === undefined ? wrappedDataKey : opts.wrapped } : {}),
  });
  const cps = [...(opts.checkpoints ?? []).map((c) => ({ c, given: false })), ...(opts.given ?? []).map((c) => ({ c, given: true }))];
  const order = opts.order ?? 'announced';
  if (order === 'checkpoints-first') {
    for (const { c, given } of cps) v.addCheckpoint(c, { given });
    for (const e of events) (rows ? v.addRow(toRow(e)) : v.addEvent(e));
  } else if (order === 'announced') {
    // export order: events, then checkpoints; the reader announced the sizes up front
    v.expectCheckpointSizes(cps.map(({ c }) => c.tree_size!));
    for (const e of events) (rows ? v.addRow(toRow(e)) : v.addEvent(e));
    for (const { c, given } of cps) v.addCheckpoint(c, { given });
  } else {
    const sorted = [...cps].sort((a, b) => a.c.tree_size! - b.c.tree_size!);
    let i = 0;
    for (const [k, e] of events.entries()) {
      while (i < sorted.length && sorted[i]!.c.tree_size! <= k) v.addCheckpoint(sorted[i]!.c, { given: sorted[i]!.given }), i++;
      (rows ? v.addRow(toRow(e)) : v.addEvent(e));
    }
    for (; i < sorted.length; i++) v.addCheckpoint(sorted[i]!.c, { given: sorted[i]!.given });
  }
  return v.finish();
}

const N = 30;
const CP_SIZES = [10, 20, 30];

function fresh(): { events: VerifierEvent[]; checkpoints: VerifierCheckpoint[] } {
  const events = buildChain(N);
  return { events, checkpoints: CP_SIZES.map((s) => checkpointAt(events, s)) };
}

const ORDERS = ['announced', 'checkpoints-first', 'interleaved'] as const;

test('intact chain verifies in every feeding order, with and without the master key', (t) => {
  const { events, checkpoints } = fresh();
  for (const order of ORDERS) {
    for (const withMasterKey of [false, true]) {
      const verdict = verify(events, { checkpoints, order, withMasterKey });
      t.deepEqual(verdict, { account_id: ACCOUNT, events: N, checkpoints: 3, first_bad_seq: null, reason: null, shredded: false, warnings: [] }, `${order} ${withMasterKey}`);
    }
  }
  // a checkpoint at size 0 and a given checkpoint of the full log
  t.is(verify(events, { checkpoints: [checkpointAt(events, 0)], given: [checkpointAt(events, N)] }).reason, null);
});

test('shredded account (data key destroyed) verifies and is reported as shredded', (t) => {
  const { events, checkpoints } = fresh();
  const verdict = verify(events, { checkpoints, withMasterKey: true, wrapped: null });
  t.is(verdict.reason, null);
  t.true(verdict.shredded);
});

function expectBad(t: import('ava').ExecutionContext, verdict: AccountVerdict, seq: number | null, reason: RegExp): void {
  t.is(verdict.first_bad_seq, seq, verdict.reason ?? 'no reason');
  t.regex(verdict.reason ?? '', reason);
}

test('a flipped payload byte → that seq', (t) => {
  const { events, checkpoints } = fresh();
  const p = Uint8Array.from(events[4]!.payload!);
  p[p.length - 1]! ^= 0x01;
  events[4]!.payload = p;
  for (const order of ORDERS) expectBad(t, verify(events, { checkpoints, order }), 5, /event 5: payload does not match payload_hash/);
});

test('an altered header field → that seq', (t) => {
  const { events, checkpoints } = fresh();
  events[6]!.header = { ...events[6]!.header, route: '/v1/payouts' };
  for (const order of ORDERS) expectBad(t, verify(events, { checkpoints, order }), 7, /event 7: header does not hash/);
});

test('an altered stored hash → that seq', (t) => {
  const { events, checkpoints } = fresh();
  events[2]!.hash = sha256Hex('x');
  expectBad(t, verify(events, { checkpoints }), 3, /event 3: header does not hash/);
});

test('a missing middle event → the missing seq', (t) => {
  const { events, checkpoints } = fresh();
  events.splice(5, 1);
  for (const order of ORDERS) expectBad(t, verify(events, { checkpoints, order }), 6, /event seq 6 is missing/);
});

test('swapped events → the seq whose place was taken', (t) => {
  const { events, checkpoints } = fresh();
  [events[3], events[4]] = [events[4]!, events[3]!];
  for (const order of ORDERS) expectBad(t, verify(events, { checkpoints, order }), 4, /event seq 4 is missing/);
});

test('a duplicated event → the seq after it', (t) => {
  const { events } = fresh();
  events.splice(3, 0, events[2]!);
  expectBad(t, verify(events), 4, /expected seq 4, found seq 3/);
});

test('an event of another account → that seq', (t) => {
  const { events } = fresh();
  events[8]!.header = { ...events[8]!.header, account_id: 'acct-2' };
  rechain(events, 8);
  expectBad(t, verify(events), 9, /account_id is "acct-2"/);
});

test('a cut tail under a stored or given checkpoint → log size + 1', (t) => {
  const { events, checkpoints } = fresh();
  const cut = events.slice(0, 24);
  for (const order of ORDERS) {
    expectBad(t, verify(cut, { checkpoints, order }), 25, /log has 24 events but a signed stored checkpoint covers 30: the log was cut off or rolled back/);
  }
  // the attacker also deleted the stored checkpoint beyond the cut; the user's copy still catches it
  expectBad(t, verify(cut, { checkpoints: checkpoints.slice(0, 2), given: [checkpoints[2]!] }), 25, /given checkpoint covers 30/);
  // without any checkpoint beyond the cut, a cut tail is undetectable
  t.is(verify(cut, { checkpoints: checkpoints.slice(0, 2) }).reason, null);
});

test('a re-chained forgery is caught by the first checkpoint after it', (t) => {
  const { events, checkpoints } = fresh();
  events[13]!.header = { ...events[13]!.header, state: 'canceled' };
  rechain(events, 13);
  // every link and hash is consistent now
  t.is(verify(events).reason, null);
  for (const order of ORDERS) {
    const v = verify(events, { checkpoints, order });
    expectBad(t, v, 20, /Merkle root at size 20 differs from a signed stored checkpoint/);
    t.regex(v.reason!, /matches the signed checkpoint at size 10, so the change lies in seq 11\.\.20/);
  }
  // without the checkpoint at 10 the range starts at 1
  t.regex(verify(events, { checkpoints: checkpoints.slice(1) }).reason!, /change lies in seq 1\.\.20/);
});

test('a rollback and rewrite (same length) is caught by a given checkpoint', (t) => {
  const { events } = fresh();
  const given = checkpointAt(events, N);
  events[25]!.header = { ...events[25]!.header, type: 'canceled' };
  rechain(events, 25);
  const forgedStored = [10, 20, 30].map((s) => checkpointAt(events, s, signingKeyFromSeed(generateSeed(), `gatehouse/${LEDGER}`)));
  const v = verify(events, { checkpoints: forgedStored, given: [given] });
  // the forged stored checkpoints are signed by an unknown key: reported at their tree size, but
  // they rank after a failure found in the log itself, so the given checkpoint's root mismatch wins
  expectBad(t, v, 30, /differs from a signed given checkpoint/);
  const onlyForged = verify(events, { checkpoints: forgedStored });
  expectBad(t, onlyForged, 10, /stored checkpoint at size 10 is not signed by a trusted key/);
});

test('with the master key, an intact-hash payload that does not decrypt is tampering', (t) => {
  const { events } = fresh();
  // re-seal seq 3 under another data key and re-chain: hashes are all consistent
  const payload = sealPayload(sodium, generateKey(sodium), ACCOUNT, 3, new TextEncoder().encode('{"n":999}'));
  events[2]!.payload = payload;
  events[2]!.header = { ...events[2]!.header, payload_hash: sha256Hex(payload) };
  rechain(events, 2);
  t.is(verify(events).reason, null); // without the master key this is invisible
  expectBad(t, verify(events, { withMasterKey: true }), 3, /event 3: payload matches its hash but does not decrypt/);
  // a payload moved to another seq fails too (associated data binds the seq)
  const moved = fresh().events;
  moved[1]!.payload = moved[0]!.payload;
  moved[1]!.header = { ...moved[1]!.header, payload_hash: moved[0]!.header.payload_hash };
  rechain(moved, 1);
  expectBad(t, verify(moved, { withMasterKey: true }), 2, /does not decrypt/);
});

test('a wrong master key is reported at the first event with a payload', (t) => {
  const { events } = fresh();
  const v = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)], masterKey: { bytes: generateKey(sodium), sodium }, wrappedDataKey });
  for (const e of events) v.addEvent(e);
  expectBad(t, v.finish(), 1, /data key does not unwrap/);
  // no payload at seq 1: the first one that cannot be opened
  const later = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)], masterKey: { bytes: generateKey(sodium), sodium }, wrappedDataKey });
  const noFirst = fresh().events;
  noFirst[0]!.payload = null;
  noFirst[0]!.header = { ...noFirst[0]!.header, payload_hash: null };
  rechain(noFirst);
  for (const e of noFirst) later.addEvent(e);
  expectBad(t, later.finish(), 2, /data key does not unwrap/);
});

test('checkpoints: foreign origin, unsigned fields that disagree with the note', (t) => {
  const { events } = fresh();
  const other = checkpointAt(events, 10, logKey, 'acct-2');
  expectBad(t, verify(events, { checkpoints: [other] }), 10, /origin "gatehouse\/L1\/acct-2", not "gatehouse\/L1\/acct-1"/);
  const cp = checkpointAt(events, 10);
  expectBad(t, verify(events, { checkpoints: [{ ...cp, tree_size: 11 }], order: 'checkpoints-first' }), 10, /tree_size 11 differs from its signed note/);
  expectBad(t, verify(events, { checkpoints: [{ ...cp, root_hash: sha256Hex('r') }] }), 10, /root_hash differs/);
  expectBad(t, verify(events, { given: [{ ...cp, account_id: 'acct-2' }], order: 'checkpoints-first' }), 10, /given checkpoint at size 10: account_id "acct-2" differs from its signed note \(origin "gatehouse\/L1\/acct-1"\)/);
  t.is(verify(events, { given: [{ ...cp, account_id: ACCOUNT }], order: 'checkpoints-first' }).reason, null, 'an account_id that agrees is fine');
  // a bare note (no JSON fields) works
  t.is(verify(events, { given: [{ note: cp.note }], order: 'checkpoints-first' }).reason, null);
  // without ledgerId, the origin must be the signing key's name + account
  const v = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)] });
  v.addCheckpoint(cp, { given: true });
  v.addCheckpoint(other, { given: true });
  for (const e of events) v.addEvent(e);
  expectBad(t, v.finish(), 10, /origin "gatehouse\/L1\/acct-2"/);
});

test('the earliest failure wins, whichever check found it', (t) => {
  const { events, checkpoints } = fresh();
  events[13]!.header = { ...events[13]!.header, state: 'canceled' };
  rechain(events, 13); // caught at 20 by the checkpoint…
  events[26]!.header = { ...events[26]!.header, route: '/x' }; // …and at 27 by the hash
  for (const order of ORDERS) t.is(verify(events, { checkpoints, order }).first_bad_seq, 20, order);
});

test('a checkpoint behind the log that was not announced is a usage error', (t) => {
  const { events, checkpoints } = fresh();
  const v = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)] });
  for (const e of events) v.addEvent(e);
  t.throws(() => v.addCheckpoint(checkpoints[0]!, { given: false }), { message: /add checkpoints before the events/ });
  t.notThrows(() => v.addCheckpoint(checkpoints[2]!, { given: false })); // the current size is fine
  t.is(v.finish().reason, null);
});

test('malformed headers are reported at their seq', (t) => {
  const { events } = fresh();
  (events[3]!.header as unknown as Record<string, unknown>).extra = 1;
  expectBad(t, verify(events), 4, /event 4: malformed header: unexpected field "extra"/);
  const e2 = fresh().events;
  delete (e2[5]!.header as unknown as Record<string, unknown>).provider_ref;
  expectBad(t, verify(e2), 6, /missing field provider_ref/);
});

test('a missing or non-hex stored hash is reported at its seq', (t) => {
  for (const bad of [null, 'zz'.repeat(32), 'AB'.repeat(32)]) {
    const { events } = fresh();
    (events[4] as { hash: unknown }).hash = bad;
    expectBad(t, verify(events), 5, /event 5: stored hash is not 64 lowercase hex digits/);
  }
});

test('rows: escaped strings take the full JCS and verify; wrong column types are malformed on both paths', (t) => {
  const events = buildChain(6);
  events[1]!.header = { ...events[1]!.header, route: '/v1/"quoted"\\path', provider_ref: 'é\n中' };
  rechain(events, 1);
  t.is(verify(events).reason, null);
  // an INTEGER where a string belongs, a BLOB, a REAL status: what a tampered SQLite row can hold
  for (const [field, value] of [['actor', 5], ['route', Buffer.from('/x')], ['response_status', 201.5], ['seq', '3']] as const) {
    const bad = buildChain(6);
    bad[2]!.header = { ...bad[2]!.header, [field]: value } as unknown as EventHeader;
    const row = bad.map(toRow);
    const v = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)], ledgerId: LEDGER });
    for (const r of row) v.addRow(r);
    const verdict = v.finish();
    t.is(verdict.first_bad_seq, 3, `${field}: ${verdict.reason}`);
    t.regex(verdict.reason!, /malformed header/);
  }
});

/**
 * Feed events [from, to) (0-based) as a worker thread would: checked with checkEventRow against
 * their predecessor, their leaves as SubtreeRange subtrees cut at the verifier's waiting sizes.
 * Returns what addCheckedSubtrees answered (false: nothing taken).
 */
function feedSubtrees(v: ChainVerifier, events: VerifierEvent[], from: number, to: number, cuts = v.waitingSizes()): boolean {
  const range = new SubtreeRange(from);
  const levels = new Uint8Array(512);
  const hashes = Buffer.alloc(512 * 32);
  let n = 0;
  for (let i = from; i < to; i++) {
    const prev = i === from ? (events[i]!.header as EventHeader).prev_hash : events[i - 1]!.hash;
    t_assert(checkEventRow(toRow(events[i]!), i + 1, prev, ACCOUNT, null) === events[i]!.hash, `row ${i + 1} is intact`);
    range.appendEventHash(events[i]!.hash);
    if (cuts.includes(i + 1)) n += range.take(levels, hashes, n);
  }
  n += range.take(levels, hashes, n);
  return v.addCheckedSubtrees(from + 1, (events[from]!.header as EventHeader).prev_hash, events[to - 1]!.hash, to - from, levels, hashes, n);
}

function t_assert(ok: boolean, what: string): void {
  if (!ok) throw new Error(`fixture: ${what}`);
}

function subtreeVerifier(checkpoints: VerifierCheckpoint[]): ChainVerifier {
  const v = new ChainVerifier({ accountId: ACCOUNT, trustedKeys: [noteVerifierKey(logKey)], ledgerId: LEDGER });
  for (const c of checkpoints) v.addCheckpoint(c, { given: false });
  return v;
}

test('subtrees checked elsewhere: the same verdict as rows, checkpoints inside them compared at their sizes', (t) => {
  // 37 events (no power of two), checkpoints at sizes a worker slice holds at odd places.
  const events = buildChain(37);
  const sizes = [3, 9, 10, 21, 22, 37];
  const checkpoints = sizes.map((s) => checkpointAt(events, s));
  const byRows = verify(events, { checkpoints, order: 'checkpoints-first' });
  t.is(byRows.reason, null);
  for (const [from, to] of [[0, 37], [5, 23], [7, 37], [1, 2], [8, 9]] as const) {
    const v = subtreeVerifier(checkpoints);
    for (const e of events.slice(0, from)) v.addRow(toRow(e));
    t.deepEqual(v.waitingSizes(), sizes.filter((s) => s > from));
    t.true(feedSubtrees(v, events, from, to), `${from}..${to}`);
    for (const e of events.slice(to)) v.addRow(toRow(e));
    t.deepEqual(v.finish(), byRows, `${from}..${to}`);
  }
});

test('subtrees checked elsewhere: a re-chained forgery inside them is caught by the checkpoint after it, as on rows', (t) => {
  const events = buildChain(37);
  const checkpoints = [9, 21, 37].map((s) => checkpointAt(events, s));
  for (const at of [5, 10, 20, 30]) {
    const forged = events.map((e) => ({ ...e }));
    forged[at - 1]!.header = { ...forged[at - 1]!.header, route: '/v1/forged' };
    rechain(forged, at - 1);
    const byRows = verify(forged, { checkpoints, order: 'checkpoints-first' });
    t.is(byRows.first_bad_seq, at <= 9 ? 9 : at <= 21 ? 21 : 37);
    const v = subtreeVerifier(checkpoints);
    for (const e of forged.slice(0, 2)) v.addRow(toRow(e));
    t.true(feedSubtrees(v, forged, 2, 33));
    for (const e of forged.slice(33)) v.addRow(toRow(e));
    t.deepEqual(v.finish(), byRows, `forged at ${at}`);
  }
});

test('subtrees checked elsewhere are refused, changing nothing, unless they continue the chain and stop at every checkpoint size', (t) => {
  const events = buildChain(20);
  const checkpoints = [6, 13].map((s) => checkpointAt(events, s));
  const reference = verify(events, { checkpoints, order: 'checkpoints-first' });
  const v = subtreeVerifier(checkpoints);
  for (const e of events.slice(0, 4)) v.addRow(toRow(e));
  t.false(feedSubtrees(v, events, 4, 16, [13]), 'a subtree spans size 6, where a checkpoint waits');
  t.false(feedSubtrees(v, events, 5, 16), 'not the next seq');
  t.false(v.addCheckedSubtrees(5, 'ab'.repeat(32), events[4]!.hash, 1, Uint8Array.of(0), Buffer.alloc(32), 1), 'a prev_hash that does not link');
  t.true(feedSubtrees(v, events, 4, 14));
  // A subtree not aligned where it lands (no checkpoint waits in 14..20): a level-2 root (4
  // leaves) at size 14, which is no multiple of 4; and one that covers fewer leaves than claimed.
  const levels = Uint8Array.of(2);
  const root = Buffer.alloc(32, 1);
  t.false(v.addCheckedSubtrees(15, events[13]!.hash, events[17]!.hash, 4, levels, root, 1), 'size 14 is not a multiple of 4');
  v.addRow(toRow(events[14]!));
  v.addRow(toRow(events[15]!));
  t.false(v.addCheckedSubtrees(17, events[15]!.hash, events[19]!.hash, 3, levels, root, 1), 'covers 4 leaves, claims 3');
  // Nothing above changed the verifier: the rest as subtrees gives the reference verdict.
  t.true(feedSubtrees(v, events, 16, 20));
  t.deepEqual(v.finish(), reference);
});

test('subtrees checked elsewhere: a checkpoint whose root they do not give is still a mismatch', (t) => {
  const events = buildChain(23);
  const other = events.map((e) => ({ ...e }));
  other[10]!.header = { ...other[10]!.header, route: '/v1/other' };
  rechain(other, 10);
  // A stored checkpoint signed over a different log at 15: the subtrees must land on 15 and compare.
  const checkpoints = [checkpointAt(events, 7), checkpointAt(other, 15)];
  const byRows = verify(events, { checkpoints, order: 'checkpoints-first' });
  t.is(byRows.first_bad_seq, 15);
  t.regex(byRows.reason!, /Merkle root at size 15 differs/);
  const v = subtreeVerifier(checkpoints);
  t.true(feedSubtrees(v, events, 0, 23));
  t.deepEqual(v.finish(), byRows);
});
