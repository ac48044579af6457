import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A second copy of one of kafkajs's modules, loaded past the module cache (which is then
 * restored, so kafkajs keeps the one it loaded): the original as kafkajs ships it, for
 * tests comparing a patch (installKafkaPatches) with it even when the replacement is installed.
 */
export function freshKafkajsModule<T>(path: string): T {
  const resolved = require.resolve(path);
  const loaded = require.cache[resolved];
  delete require.cache[resolved];
  try {
    return require(resolved) as T;
  } finally {
    if (loaded) require.cache[resolved] = loaded;
  }
}
