/**
 * 64-bit key fingerprints: two 32-bit MurmurHash3-style hashes over the key's UTF-16
 * code units, computed in one pass without allocating. The store keeps only the
 * fingerprint, never the string.
 *
 * The second hash uses different block constants (those of MurmurHash3_x86_128's
 * second lane) as well as a different seed, so a structured difference that cancels
 * in one hash does not also cancel in the other; for unrelated keys the pair behaves
 * like 64 random bits and n keys collide with probability about n² / 2^65
 * (1e6 keys: 2.7e-8). Neither hash is cryptographic: with a public seed an attacker who
 * controls part of a key could steer its fingerprint onto someone else's key, so
 * production stores take a secret random seed (WindowConfig.seed).
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const D1 = 0x239b961b;
const D2 = 0xab0e9789;

/** Derives the two 32-bit seeds from the store seed; both hashes must differ from the start. */
export function fingerprintSeeds(seed: number): [number, number] {
  const s = seed >>> 0;
  return [s, (Math.imul(s ^ 0x5bd1e995, 0x85ebca6b) ^ 0x27d4eb2f) >>> 0];
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Mixes one 32-bit block (two code units) into the first hash. */
function mixA(a: number, block: number): number {
  let k = Math.imul(block, C1);
  k = Math.imul((k << 15) | (k >>> 17), C2);
  a ^= k;
  a = (a << 13) | (a >>> 19);
  return (Math.imul(a, 5) + 0xe6546b64) | 0;
}

/** Mixes one 32-bit block into the second hash. */
function mixB(b: number, block: number): number {
  let m = Math.imul(block, D1);
  m = Math.imul((m << 16) | (m >>> 16), D2);
  b ^= m;
  b = (b << 17) | (b >>> 15);
  return (Math.imul(b, 5) + 0x0bcaa747) | 0;
}

/** The odd last code unit, the length, and the final mix, into out[0] and out[1]. */
function finish(a: number, b: number, tail: number, len: number, out: Uint32Array): void {
  if (tail >= 0) {
    let k = Math.imul(tail, C1);
    a ^= Math.imul((k << 15) | (k >>> 17), C2);
    k = Math.imul(tail, D1);
    b ^= Math.imul((k << 16) | (k >>> 16), D2);
  }
  // Length in bytes, as MurmurHash3 does, so "a" and "a\0" differ.
  out[0] = fmix32(a ^ (len << 1));
  out[1] = fmix32(b ^ (len << 1));
}

/**
 * Writes the fingerprint of `key` into out[0] (h1) and out[1] (h2). Two code units form
 * one 32-bit block; an odd last unit is the tail. Hot path: no allocation, no closures.
 */
export function keyFingerprintInto(key: string, seedA: number, seedB: number, out: Uint32Array): void {
  let a = seedA | 0;
  let b = seedB | 0;
  const len = key.length;
  const even = len & ~1;
  for (let i = 0; i < even; i += 2) {
    const block = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    a = mixA(a, block);
    b = mixB(b, block);
  }
  finish(a, b, even !== len ? key.charCodeAt(even) : -1, len, out);
}

/** Both hashes after the whole blocks of a prefix, and its odd last unit (-1 if none). */
export interface PrefixHash {
  readonly a: number;
  readonly b: number;
  readonly carry: number;
  readonly length: number;
}

/** The state after hashing `prefix`, to continue with any number of rests (continuedFingerprintInto). */
export function prefixHash(prefix: string, seedA: number, seedB: number): PrefixHash {
  let a = seedA | 0;
  let b = seedB | 0;
  const even = prefix.length & ~1;
  for (let i = 0; i < even; i += 2) {
    const block = prefix.charCodeAt(i) | (prefix.charCodeAt(i + 1) << 16);
    a = mixA(a, block);
    b = mixB(b, block);
  }
  return { a, b, carry: even !== prefix.length ? prefix.charCodeAt(even) : -1, length: prefix.length };
}

/**
 * keyFingerprintInto(prefix + rest) from the prefix's state, without making that
 * string: V8 makes a concatenation a rope and copies it flat on the first character
 * read, which cost more than hashing it. Keys sharing a prefix (a policy's id and
 * subject scope) hash only their rest.
 */
export function continuedFingerprintInto(state: PrefixHash, rest: string, out: Uint32Array): void {
  let a = state.a;
  let b = state.b;
  let i = 0;
  let pending = state.carry;
  if (pending >= 0 && rest.length > 0) {
    const block = pending | (rest.charCodeAt(0) << 16);
    a = mixA(a, block);
    b = mixB(b, block);
    pending = -1;
    i = 1;
  }
  const end = i + ((rest.length - i) & ~1);
  for (; i < end; i += 2) {
    const block = rest.charCodeAt(i) | (rest.charCodeAt(i + 1) << 16);
    a = mixA(a, block);
    b = mixB(b, block);
  }
  finish(a, b, pending >= 0 ? pending : i < rest.length ? rest.charCodeAt(i) : -1, state.length + rest.length, out);
}

/** Convenience for tests and cold paths: allocates the result pair. */
export function keyFingerprint(key: string, seed = 0): [number, number] {
  const [sa, sb] = fingerprintSeeds(seed);
  const out = new Uint32Array(2);
  keyFingerprintInto(key, sa, sb, out);
  return [out[0]!, out[1]!];
}
