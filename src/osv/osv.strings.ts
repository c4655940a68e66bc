// Flat storage for the index (osv.index.ts): an interning string table whose text lives in one byte buffer, with
// offsets and an open-addressing hash in typed arrays, and a hash from pairs of int32 to int32. The point is what
// the garbage collector sees: a handful of typed arrays whatever the corpus size, instead of one heap object per
// string or entry that every full collection marks (issue 20: ~550 MB of index objects cost 250–450 ms per
// collection on the request thread).

/** An Int32Array of at least `need` elements holding `a`'s contents (the same one when it is large enough). */
export function growInt32(a: Int32Array<ArrayBuffer>, need: number, fill = 0): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const next = new Int32Array(Math.max(need, a.length * 2, 16));
  next.set(a);
  if (fill !== 0) next.fill(fill, a.length);
  return next;
}

/** `growInt32` for bytes. */
export function growUint8(a: Uint8Array<ArrayBuffer>, need: number): Uint8Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const next = new Uint8Array(Math.max(need, a.length * 2, 16));
  next.set(a);
  return next;
}

/** FNV-1a over `bytes[0..length)`. */
function hashBytes(bytes: Uint8Array, length: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h | 0;
}

/**
 * Strings interned to dense ids (0, 1, 2, …) in insertion order. Text is kept as UTF-8, so comparing two ids byte
 * by byte is code point order (the order of `compareIds`, SQLite BINARY and PostgreSQL "C"). Nothing is ever
 * removed: a string that stops being used stays until the index is built again, which the replica's keeper does
 * in the background once refreshes have interned a set share of the table (osv.loader.ts, `createIndexKeeper`).
 */
export class StringTable {
  private bytes = new Uint8Array(1 << 16);
  private text_ = Buffer.from(this.bytes.buffer, 0, this.bytes.length);
  private used = 0;
  /** starts[id] .. starts[id + 1]: the bytes of `id`. */
  private starts = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  /** Open addressing: id + 1, 0 for a free slot. */
  private slots = new Int32Array(2048);
  private count_ = 0;
  /** Where a looked-up string is encoded (grown to its longest). */
  private scratch = Buffer.allocUnsafeSlow(256);

  get size(): number {
    return this.count_;
  }

  /** Bytes the strings take, however full the arrays are: their text and 16 bytes of offsets and hash each. */
  get usedBytes(): number {
    return this.used + this.count_ * 16;
  }

  /** Bytes held by the table (text, offsets and hash). */
  get byteSize(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.hashes.byteLength + this.slots.byteLength;
  }

  private encode(s: string): number {
    if (s.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(Math.max(s.length * 3, this.scratch.length * 2));
    return this.scratch.write(s, 0, 'utf8');
  }

  private equalsScratch(id: number, length: number): boolean {
    const start = this.starts[id]!;
    if (this.starts[id + 1]! - start !== length) return false;
    const bytes = this.bytes;
    const scratch = this.scratch;
    for (let i = 0; i < length; i++) if (bytes[start + i] !== scratch[i]) return false;
    return true;
  }

  /** The slot of the string in `scratch` (its id + 1 there), or the free slot where it would go. */
  private slotOf(hash: number, length: number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return slot;
      const id = entry - 1;
      if (this.hashes[id] === hash && this.equalsScratch(id, length)) return slot;
      slot = (slot + 1) & mask;
    }
  }

  /** The id of `s`, or -1 when the table does not hold it. */
  find(s: string): number {
    const length = this.encode(s);
    return this.slots[this.slotOf(hashBytes(this.scratch, length), length)]! - 1;
  }

  /** The id of `s`, adding it when new. */
  intern(s: string): number {
    const length = this.encode(s);
    const hash = hashBytes(this.scratch, length);
    const slot = this.slotOf(hash, length);
    const known = this.slots[slot]!;
    if (known !== 0) return known - 1;
    const id = this.count_++;
    if (this.used + length > this.bytes.length) {
      this.bytes = growUint8(this.bytes, this.used + length);
      this.text_ = Buffer.from(this.bytes.buffer, 0, this.bytes.length);
    }
    this.scratch.copy(this.bytes, this.used, 0, length);
    this.starts = growInt32(this.starts, id + 2);
    this.hashes = growInt32(this.hashes, id + 1);
    this.starts[id] = this.used;
    this.used += length;
    this.starts[id + 1] = this.used;
    this.hashes[id] = hash;
    this.slots[slot] = id + 1;
    if (this.count_ * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.count_; id++) {
      let slot = this.hashes[id]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.slots = slots;
  }

  /** The text of `id` (a new string each call: callers keep it only for the request). */
  text(id: number): string {
    return this.text_.toString('utf8', this.starts[id], this.starts[id + 1]);
  }

  /** Byte length of `id`'s text. */
  byteLength(id: number): number {
    return this.starts[id + 1]! - this.starts[id]!;
  }

  /** Copies the UTF-8 bytes of `id` into `target` at `at`; returns the position after them. */
  copyTo(id: number, target: Uint8Array, at: number): number {
    const start = this.starts[id]!;
    const end = this.starts[id + 1]!;
    target.set(this.bytes.subarray(start, end), at);
    return at + end - start;
  }

  /** Whether `id`'s text is written into JSON as it is (printable ASCII without `"` and `\\`). */
  isPlainJson(id: number): boolean {
    const bytes = this.bytes;
    for (let i = this.starts[id]!; i < this.starts[id + 1]!; i++) {
      const b = bytes[i]!;
      if (b < 0x20 || b > 0x7e || b === 0x22 || b === 0x5c) return false;
    }
    return true;
  }

  /** Byte order of two ids' texts. */
  compare(a: number, b: number): number {
    if (a === b) return 0;
    const bytes = this.bytes;
    let i = this.starts[a]!;
    const endA = this.starts[a + 1]!;
    let j = this.starts[b]!;
    const endB = this.starts[b + 1]!;
    for (; i < endA && j < endB; i++, j++) {
      const d = bytes[i]! - bytes[j]!;
      if (d !== 0) return d;
    }
    return endA - i - (endB - j);
  }

  /** Byte order of `id`'s text against `key[0..length)` (a key prepared with `keyOf`). */
  compareKey(id: number, key: Uint8Array): number {
    const bytes = this.bytes;
    let i = this.starts[id]!;
    const end = this.starts[id + 1]!;
    let j = 0;
    for (; i < end && j < key.length; i++, j++) {
      const d = bytes[i]! - key[j]!;
      if (d !== 0) return d;
    }
    return end - i - (key.length - j);
  }
}

/** The UTF-8 bytes of `s`, for `StringTable.compareKey`. */
export function keyOf(s: string): Uint8Array {
  return Buffer.from(s, 'utf8');
}

/** A hash from a pair of non-negative int32 to an int32, in typed arrays. Entries are never removed. */
export class PairMap {
  private keysA = new Int32Array(1024);
  private keysB = new Int32Array(1024);
  private values = new Int32Array(1024);
  private count = 0;

  private static hash(a: number, b: number): number {
    return Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) ^ (b >>> 7);
  }

  private slotOf(a: number, b: number): number {
    const mask = this.values.length - 1;
    let slot = PairMap.hash(a, b) & mask;
    // keysA holds a + 1, so 0 marks a free slot.
    while (this.keysA[slot] !== 0 && (this.keysA[slot] !== a + 1 || this.keysB[slot] !== b)) slot = (slot + 1) & mask;
    return slot;
  }

  /** The value for (a, b), or -1. */
  get(a: number, b: number): number {
    const slot = this.slotOf(a, b);
    return this.keysA[slot] === 0 ? -1 : this.values[slot]!;
  }

  set(a: number, b: number, value: number): void {
    const slot = this.slotOf(a, b);
    if (this.keysA[slot] === 0) {
      this.keysA[slot] = a + 1;
      this.keysB[slot] = b;
      this.count++;
    }
    this.values[slot] = value;
    if (this.count * 2 > this.values.length) this.rehash();
  }

  private rehash(): void {
    const { keysA, keysB, values } = this;
    this.keysA = new Int32Array(keysA.length * 2);
    this.keysB = new Int32Array(keysA.length * 2);
    this.values = new Int32Array(keysA.length * 2);
    this.count = 0;
    for (let i = 0; i < keysA.length; i++) if (keysA[i] !== 0) this.set(keysA[i]! - 1, keysB[i]!, values[i]!);
  }

  get byteSize(): number {
    return this.keysA.byteLength * 3;
  }
}
