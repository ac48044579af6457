import { describe, expect, it } from 'vitest';
import { DropLog } from './drop-log.js';

describe('DropLog', () => {
  it('gives at most one line per interval, with every drop since the last line', () => {
    const log = new DropLog(1_000);
    expect(log.note('buffer_full', 5, 0)).toEqual({ buffer_full: 5 });
    expect(log.note('buffer_full', 7, 10)).toBeUndefined();
    expect(log.note('invalid', 1, 999)).toBeUndefined();
    expect(log.due(999)).toBeUndefined();
    expect(log.due(1_000)).toEqual({ buffer_full: 7, invalid: 1 });
    expect(log.due(5_000)).toBeUndefined(); // nothing new: no line
  });
});
