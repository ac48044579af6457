import { describe, expect, it } from 'vitest';
import { Deque } from './deque.js';

describe('Deque', () => {
  it('keeps FIFO order across growth, with items put back in front', () => {
    const d = new Deque<number>();
    for (let i = 0; i < 40; i++) d.push(i);
    expect(d.shift()).toBe(0);
    d.unshift(-1);
    d.unshift(-2);
    for (let i = 40; i < 100; i++) d.push(i);
    const out: number[] = [];
    for (let x = d.shift(); x !== undefined; x = d.shift()) out.push(x);
    expect(out).toEqual([-2, -1, ...Array.from({ length: 99 }, (_, i) => i + 1)]);
    expect(d.length).toBe(0);
    expect(d.peek()).toBeUndefined();
  });
});
