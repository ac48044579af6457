import { createRequire } from 'node:module';
import { kafkajsEncoderClass } from './encoder-fix.js';
import { encodeProduceRequest, type ProduceRequestArgs } from './produce-request.js';

/**
 * Puts encodeProduceRequest (produce-request.ts) in front of kafkajs 2.2.4's Produce
 * request encoder: kafkajs's protocol modules for Produce v4 to v7 wrap v3's, and take
 * it when they are first loaded, at a producer's first send. So the v3 module's export
 * is replaced before that; a request the one-pass encoder does not take (compression,
 * say) is encoded by kafkajs's own code. Applied once per process, by installKafkaPatches().
 */

type ProduceRequestFactory = (args: ProduceRequestArgs) => { apiVersion: number; encode: () => Promise<unknown> };

const require = createRequire(import.meta.url);
export const PRODUCE_V3_MODULE = 'kafkajs/src/protocol/requests/produce/v3/request.js';
const LATER_VERSIONS = [4, 5, 6, 7].map((v) => `kafkajs/src/protocol/requests/produce/v${v}/request.js`);
let applied = false;
const encodings = { onePass: 0, kafkajs: 0 };

/** How many Produce requests this process encoded in one pass and how many kafkajs encoded: a fall-back shows. */
export function produceRequestEncodings(): { onePass: number; kafkajs: number } {
  return { ...encodings };
}

/**
 * Returns whether kafkajs's Produce requests go through the one-pass encoder: false
 * when a later version's module was loaded first (it holds kafkajs's own) or the module
 * is not what a unit test pins.
 */
export function fixKafkajsProduceRequest(): boolean {
  if (applied) return true;
  if (LATER_VERSIONS.some((m) => require.cache[require.resolve(m)] !== undefined)) return false;
  const original = require(PRODUCE_V3_MODULE) as unknown;
  const module = require.cache[require.resolve(PRODUCE_V3_MODULE)];
  if (typeof original !== 'function' || module === undefined) return false;
  module.exports = onePassProduceRequest(original as ProduceRequestFactory);
  applied = true;
  return true;
}

/** kafkajs's request object, its encode() answered by encodeProduceRequest when it can. */
export function onePassProduceRequest(original: ProduceRequestFactory): ProduceRequestFactory {
  const Encoder = kafkajsEncoderClass();
  return function produceRequest(args) {
    const request = original(args);
    const kafkajsEncode = request.encode;
    request.encode = async () => {
      const bytes = encodeProduceRequest(args);
      if (bytes === undefined) {
        encodings.kafkajs++;
        return kafkajsEncode();
      }
      encodings.onePass++;
      // An Encoder holding exactly these bytes, as kafkajs's request framing expects.
      const encoder = new Encoder(0);
      encoder.buf = bytes;
      encoder.offset = bytes.length;
      return encoder;
    };
    return request;
  };
}
