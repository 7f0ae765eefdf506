// gatehouse/client: the typed client of the v1 contract and execute(intent, spec, write).
// The client's declarations name Node's own types (a pinned key is a node:crypto KeyObject): a
// TypeScript user with @types/node installed gets them without listing "node" in `types`.
/// <reference types="node" preserve="true" />
export { GatehouseClient, errorFrom, type GatehouseClientOptions, type RawResponse, type RequestOptions } from './client.js';
export { GatehouseError, GatehouseTransportError, GrantVerificationError, isTransportError } from './errors.js';
export { PinnedKeys, verifyGrant, ed25519PublicKey, type PinnedKeysInput, type GrantExpectation } from './grant.js';
export { SqliteKeyStore, MemoryKeyStore, newIdempotencyKey, type KeyStore } from './key-store.js';
export { Executor, createExecutor } from './execute.js';
export type {
  CommandSpec,
  ExecuteKind,
  ExecuteOptions,
  ExecuteResult,
  ExecutorOptions,
  WriteContext,
  WriteFn,
  WriteResult,
} from './execute-types.js';
export * from './types.js';
