import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CompressionTypes, ConfigResourceTypes } from './kafkajs.js';

const require = createRequire(import.meta.url);

describe("the port's kafkajs constants", () => {
  it("are kafkajs 2.2.4's own codes", () => {
    const kafkajs = require('kafkajs') as { CompressionTypes: object; ConfigResourceTypes: object };
    expect(CompressionTypes).toEqual(kafkajs.CompressionTypes);
    expect(ConfigResourceTypes).toEqual(kafkajs.ConfigResourceTypes);
  });
});
