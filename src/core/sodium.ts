import sodium from 'libsodium-wrappers';

export type Sodium = typeof sodium;

let loading: Promise<Sodium> | null = null;

/** libsodium, once its WebAssembly module is ready (awaited once per process). */
export async function loadSodium(): Promise<typeof sodium> {
  loading ??= sodium.ready.then(() => sodium);
  return loading;
}
