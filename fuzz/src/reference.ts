/**
 * The oracle: a strict Avro decoder written for this harness only, straight from the
 * Avro 1.11 specification ("Binary Encoding", "Single-object encoding", "Schema
 * Resolution") plus the rules schemas/README.md adds ("Accepted bytes"). Generic over
 * a schema, simple and slow on purpose: varints in BigInt, one recursive function, no
 * shared code with the readers it judges (not even AvroCursor).
 */

export type Node =
  | { kind: 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string' }
  | { kind: 'record'; name: string; fields: { name: string; type: Node; default?: unknown; hasDefault: boolean }[] }
  | { kind: 'enum'; name: string; symbols: string[]; default?: string }
  | { kind: 'fixed'; name: string; size: number }
  | { kind: 'array'; items: Node }
  | { kind: 'map'; values: Node }
  | { kind: 'union'; branches: Node[] };

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/** A schema's JSON as a tree of nodes, named types resolved (full names, namespaces inherited). */
export function parseSchema(json: unknown): Node {
  const named = new Map<string, Node>();
  const fullName = (name: string, namespace: string | undefined) => (name.includes('.') || !namespace ? name : `${namespace}.${name}`);
  const parse = (s: unknown, namespace: string | undefined): Node => {
    if (typeof s === 'string') {
      if (PRIMITIVES.has(s)) return { kind: s } as Node;
      const found = named.get(fullName(s, namespace)) ?? named.get(s);
      if (!found) throw new Error(`reference: unknown type ${s}`);
      return found;
    }
    if (Array.isArray(s)) return { kind: 'union', branches: s.map((b) => parse(b, namespace)) };
    const o = s as {
      type: unknown;
      name?: string;
      namespace?: string;
      fields?: { name: string; type: unknown; default?: unknown }[];
      symbols?: string[];
      default?: string;
      size?: number;
      items?: unknown;
      values?: unknown;
    };
    if (typeof o.type !== 'string') return parse(o.type, namespace);
    const ns = o.name?.includes('.') ? o.name.slice(0, o.name.lastIndexOf('.')) : (o.namespace ?? namespace);
    switch (o.type) {
      case 'record':
      case 'error': {
        const node = { kind: 'record' as const, name: fullName(o.name!, ns), fields: [] as { name: string; type: Node; default?: unknown; hasDefault: boolean }[] };
        named.set(node.name, node);
        for (const f of o.fields!) node.fields.push({ name: f.name, type: parse(f.type, ns), default: f.default, hasDefault: 'default' in f });
        return node;
      }
      case 'enum': {
        const node: Node = { kind: 'enum', name: fullName(o.name!, ns), symbols: o.symbols!, ...(o.default === undefined ? {} : { default: o.default }) };
        named.set(node.name, node);
        return node;
      }
      case 'fixed': {
        const node: Node = { kind: 'fixed', name: fullName(o.name!, ns), size: o.size! };
        named.set(node.name, node);
        return node;
      }
      case 'array':
        return { kind: 'array', items: parse(o.items, namespace) };
      case 'map':
        return { kind: 'map', values: parse(o.values, namespace) };
      default:
        return parse(o.type, namespace);
    }
  };
  return parse(json, undefined);
}

/** The reference's refusal: which rule, at which byte. */
export class Refused extends Error {
  constructor(
    readonly rule: string,
    readonly at: number,
  ) {
    super(`${rule} at byte ${at}`);
  }
}

const LONG_LIMIT = 2n ** 53n - 2n;
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** A decoding position over bytes. */
export class Input {
  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
  ) {}

  take(n: number): Uint8Array {
    if (n > this.bytes.length - this.pos) throw new Refused('runs past the end', this.pos);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Spec: zigzag, then base-128 little-endian groups. Contract: at most 10 bytes, minimal, within ±(2^53 − 2). */
  varint(): bigint {
    const start = this.pos;
    let n = 0n;
    let shift = 0n;
    for (let i = 0; ; i++) {
      if (i === 10) throw new Refused('varint longer than 10 bytes', start);
      const b = this.take(1)[0]!;
      n |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (b < 0x80) {
        if (i > 0 && b === 0) throw new Refused('varint not minimal', start);
        break;
      }
    }
    const value = (n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n);
    if (value > LONG_LIMIT || value < -LONG_LIMIT) throw new Refused('long out of range', start);
    return value;
  }

  long(): number {
    return Number(this.varint());
  }

  int(): number {
    const at = this.pos;
    const v = this.varint();
    if (v < INT_MIN || v > INT_MAX) throw new Refused('int out of range', at);
    return Number(v);
  }

  length(): number {
    const at = this.pos;
    const n = this.long();
    if (n < 0) throw new Refused('negative length', at);
    return n;
  }
}

/** One value of `node` at the input's position. */
export function readValue(node: Node, input: Input): unknown {
  switch (node.kind) {
    case 'null':
      return null;
    case 'boolean': {
      const at = input.pos;
      const b = input.take(1)[0]!;
      if (b > 1) throw new Refused('boolean neither 0 nor 1', at);
      return b === 1;
    }
    case 'int':
      return input.int();
    case 'long':
      return input.long();
    case 'float':
      return new DataView(copy(input.take(4)).buffer).getFloat32(0, true);
    case 'double':
      return new DataView(copy(input.take(8)).buffer).getFloat64(0, true);
    case 'bytes':
      return Buffer.from(copy(input.take(input.length())));
    case 'string':
      return utf8.decode(input.take(input.length()));
    case 'fixed':
      return Buffer.from(copy(input.take(node.size)));
    case 'enum':
      return node.symbols[index(input, node.symbols.length)];
    case 'union':
      return readValue(node.branches[index(input, node.branches.length)]!, input);
    case 'record': {
      const out: Record<string, unknown> = {};
      for (const f of node.fields) out[f.name] = readValue(f.type, input);
      return out;
    }
    case 'array': {
      const out: unknown[] = [];
      readBlocks(input, () => out.push(readValue(node.items, input)));
      return out;
    }
    case 'map': {
      const out = Object.create(null) as Record<string, unknown>;
      readBlocks(input, () => {
        const key = readValue({ kind: 'string' }, input) as string;
        out[key] = readValue(node.values, input);
      });
      return out;
    }
  }
}

function index(input: Input, count: number): number {
  const at = input.pos;
  const i = input.long();
  if (i < 0 || i >= count) throw new Refused('index out of range', at);
  return i;
}

/**
 * Spec: blocks of a long count then that many items, ending with a zero count; a
 * negative count is followed by the block's size in bytes. Contract: the size is
 * not negative and equals exactly the bytes its items take.
 */
function readBlocks(input: Input, item: () => void): void {
  for (;;) {
    const at = input.pos;
    let count = input.long();
    if (count === 0) return;
    let end = -1;
    if (count < 0) {
      count = -count;
      const sizeAt = input.pos;
      const size = input.long();
      if (size < 0) throw new Refused('negative block size', sizeAt);
      end = input.pos + size;
    }
    for (let i = 0; i < count; i++) item();
    if (end >= 0 && input.pos !== end) throw new Refused('block size differs from its items', at);
  }
}

function copy(bytes: Uint8Array): Uint8Array {
  return Uint8Array.from(bytes);
}

/** A whole body: one value, then nothing. */
export function decodeBody(node: Node, bytes: Uint8Array, from: number): unknown {
  const input = new Input(bytes, from);
  const value = readValue(node, input);
  if (input.pos !== bytes.length) throw new Refused('trailing bytes', input.pos);
  return value;
}

export interface WriterVersion {
  readonly name: string;
  readonly fingerprint: bigint;
  readonly node: Node;
}

/** Single-object encoding: C3 01, the writer's fingerprint (8 bytes LE), the body. */
export function decodeSingleObject(writers: ReadonlyMap<bigint, WriterVersion>, name: string, bytes: Uint8Array): { writer: WriterVersion; value: unknown } {
  if (bytes.length < 2 || bytes[0] !== 0xc3 || bytes[1] !== 0x01) throw new Refused('bad magic', 0);
  if (bytes.length < 10) throw new Refused('short header', bytes.length);
  const fingerprint = Buffer.from(bytes.subarray(2, 10)).readBigUInt64LE(0);
  const writer = writers.get(fingerprint);
  if (!writer) throw new Refused('unknown fingerprint', 2);
  if (writer.name !== name) throw new Refused(`a ${writer.name}, not a ${name}`, 2);
  return { writer, value: decodeBody(writer.node, bytes, 10) };
}

/** Spec, "Schema Resolution": a writer's value in the reader's shape (records by field name, defaults for the missing). */
export function resolve(writer: Node, reader: Node, value: unknown): unknown {
  if (reader.kind === 'record' && writer.kind === 'record') {
    const w = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of reader.fields) {
      const wf = writer.fields.find((x) => x.name === f.name);
      if (wf) out[f.name] = resolve(wf.type, f.type, w[f.name]);
      else if (f.hasDefault) out[f.name] = fromDefault(f.type, f.default);
      else throw new Error(`reference: reader field ${f.name} has no writer field and no default`);
    }
    return out;
  }
  if (reader.kind === 'array' && writer.kind === 'array') return (value as unknown[]).map((v) => resolve(writer.items, reader.items, v));
  if (reader.kind === 'map' && writer.kind === 'map') {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = resolve(writer.values, reader.values, v);
    return out;
  }
  if (reader.kind === 'enum') return reader.symbols.includes(value as string) ? value : reader.default;
  if (reader.kind === 'union' || writer.kind === 'union') {
    // Every union here is ["null", T] in both versions: the branch's value passes through.
    if (value === null) return null;
    const r = reader.kind === 'union' ? reader.branches.find((b) => b.kind !== 'null')! : reader;
    const w = writer.kind === 'union' ? writer.branches.find((b) => b.kind !== 'null')! : writer;
    return resolve(w, r, value);
  }
  return value;
}

/** Spec: a default is the JSON of the field's type (of a union's first branch). */
function fromDefault(node: Node, json: unknown): unknown {
  if (node.kind === 'union') return fromDefault(node.branches[0]!, json);
  if (node.kind === 'bytes' || node.kind === 'fixed') return Buffer.from(json as string, 'latin1');
  if (node.kind === 'map') return Object.assign(Object.create(null) as object, json);
  return structuredClone(json);
}
