/** A small seeded generator (SplitMix32): the same seed gives the same choices, for replays. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A 32-bit unsigned integer. */
  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** 0 to n − 1. */
  below(n: number): number {
    return n <= 1 ? 0 : this.next() % n;
  }

  chance(p: number): boolean {
    return this.next() / 2 ** 32 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
}

/** Mixes numbers into one 32-bit seed (for a worker's chunk of inputs). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  }
  return h >>> 0;
}
