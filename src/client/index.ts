// gatehouse/client: the typed client of the v1 contract and execute(intent, spec, write).
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
