/**
 * A double-ended queue on a ring whose size is a power of two: push, shift and
 * unshift are O(1) (amortised over the doublings), with no allocation per item.
 * The buffer needs all three: append new events, drop or send the oldest, and put a
 * failed send back in front.
 */
export class Deque<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  unshift(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // let the event be collected
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  private grow(): void {
    const old = this.items;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.items = next;
    this.head = 0;
  }
}
