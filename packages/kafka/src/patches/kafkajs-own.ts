import { createRequire } from 'node:module';
import type { KafkajsDecoder } from './unreadable-batches.js';

const require = createRequire(import.meta.url);
const DECODER_MODULE = 'kafkajs/src/protocol/decoder.js';

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

/** `batches` as a Fetch response carries them for one partition (an int32 size first), in kafkajs's Decoder. */
export function partitionPart(batches: Buffer): KafkajsDecoder {
  const Decoder = require(DECODER_MODULE) as new (buffer: Buffer) => KafkajsDecoder;
  const size = Buffer.alloc(4);
  size.writeInt32BE(batches.length);
  return new Decoder(Buffer.concat([size, batches]));
}
