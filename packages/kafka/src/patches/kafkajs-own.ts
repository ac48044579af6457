import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A second copy of one of kafkajs's modules, and of the modules it loads that `chain`
 * names, loaded past the module cache (which is then restored, so kafkajs keeps what it
 * loaded): kafkajs's own code even where a patch (installKafkaPatches) replaced it, for
 * comparing a patch with the original (tests, `npm run fuzz`).
 */
export function kafkajsOwn<T>(path: string, chain: readonly string[] = []): T {
  const paths = [path, ...chain].map((p) => require.resolve(p));
  const loaded = paths.map((p) => require.cache[p]);
  for (const p of paths) delete require.cache[p];
  try {
    return require(paths[0]!) as T;
  } finally {
    paths.forEach((p, i) => {
      const module = loaded[i];
      if (module) require.cache[p] = module;
      else delete require.cache[p];
    });
  }
}
