/**
 * What a worker shows the watchdog without messages (it may be stuck in a loop and
 * never read one): a heartbeat bumped before every reader call, which reader, and
 * the input being tried.
 */
export const MAX_SHOWN_INPUT = 1 << 20;

const HEARTBEAT = 0;
const CHUNK = 1;
const STEP = 2;
const READER = 3;
const LENGTH = 4;

export class SharedProgress {
  readonly control: Int32Array;
  readonly input: Uint8Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(32 + MAX_SHOWN_INPUT)) {
    this.control = new Int32Array(buffer, 0, 8);
    this.input = new Uint8Array(buffer, 32, MAX_SHOWN_INPUT);
  }

  startInput(chunk: number, step: number, bytes: Uint8Array): void {
    const shown = Math.min(bytes.length, MAX_SHOWN_INPUT);
    this.input.set(bytes.subarray(0, shown));
    Atomics.store(this.control, LENGTH, shown);
    Atomics.store(this.control, CHUNK, chunk);
    Atomics.store(this.control, STEP, step);
    Atomics.add(this.control, HEARTBEAT, 1);
  }

  startReader(reader: number): void {
    Atomics.store(this.control, READER, reader);
    Atomics.add(this.control, HEARTBEAT, 1);
  }

  heartbeat(): number {
    return Atomics.load(this.control, HEARTBEAT);
  }

  where(): { chunk: number; step: number; reader: number; bytes: Uint8Array } {
    const length = Atomics.load(this.control, LENGTH);
    return { chunk: Atomics.load(this.control, CHUNK), step: Atomics.load(this.control, STEP), reader: Atomics.load(this.control, READER), bytes: this.input.slice(0, length) };
  }
}
