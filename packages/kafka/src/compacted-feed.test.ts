import { describe, expect, it } from 'vitest';
import { endOffsets } from './compacted-feed.js';

const OFFSETS = [{ partition: 0, offset: '5', high: '5', low: '0' }];
// What kafkajs 2.2.4's admin.fetchTopicOffsets throws while its metadata has the topic without partitions.
const kafkajsTypeError = () => new TypeError("Cannot destructure property 'partitions' of 'high.pop(...)' as it is undefined.");

/** An admin whose fetchTopicOffsets throws the given errors, one per call, then answers. */
function admin(errors: Error[]) {
  let calls = 0;
  return {
    calls: () => calls,
    fetchTopicOffsets: async () => {
      calls++;
      const error = errors.shift();
      if (error) throw error;
      return OFFSETS;
    },
  };
}

describe('endOffsets', () => {
  it("retries kafkajs's TypeError for a topic a broker knows without partitions yet, and retriable errors", async () => {
    const a = admin([kafkajsTypeError(), Object.assign(new Error('not the leader'), { retriable: true }), kafkajsTypeError()]);
    expect(await endOffsets(a, 't', 10_000)).toEqual(OFFSETS);
    expect(a.calls()).toBe(4);
  });

  it('fails at once on any other error, and on those past the deadline', async () => {
    const other = admin([new TypeError('x is not a function')]);
    await expect(endOffsets(other, 't', 10_000)).rejects.toThrow('x is not a function');
    expect(other.calls()).toBe(1);
    const late = admin([kafkajsTypeError(), kafkajsTypeError()]);
    await expect(endOffsets(late, 't', 0)).rejects.toThrow(/high\.pop/);
  });
});
