// Handlers by id (a CA circuit's subscriptions, a PV Access session's requests), found on the hot
// path through a direct-mapped array in front of a Map. Ids are handed out in increasing order, so the live ones mostly differ
// in their low bits: looking one up reads one slot of an array (neighbouring ids share its cache
// lines) where a Map reads a hash bucket and an entry. The Map stays the record; an id whose slot
// another id holds is found there.

/** Slots for at least twice the entries, at least 64. */
function capacityFor(n: number): number {
  let c = 64;
  while (c < 2 * n) c *= 2;
  return c;
}

export class IdTable<V> {
  private readonly map = new Map<number, V>();
  /** [id, value] pairs by the id's low bits; id -1 marks an empty slot. */
  private slots: (number | V | undefined)[] = [];
  private mask = -1;

  constructor() {
    this.resize(capacityFor(0));
  }

  get size(): number {
    return this.map.size;
  }

  get(id: number): V | undefined {
    const i = (id & this.mask) << 1;
    const s = this.slots;
    if (s[i] === id) return s[i + 1] as V;
    return this.map.get(id);
  }

  has(id: number): boolean {
    return this.map.has(id);
  }

  set(id: number, value: V): void {
    this.map.set(id, value);
    if (2 * this.map.size > this.mask + 1) this.resize(capacityFor(this.map.size));
    else this.place(id, value);
  }

  delete(id: number): boolean {
    if (!this.map.delete(id)) return false;
    const capacity = this.mask + 1;
    // Give back the slots of a table that emptied (grown for many, now holding an eighth).
    if (capacity > 64 && 8 * this.map.size < capacity) {
      this.resize(capacityFor(this.map.size));
      return true;
    }
    const i = (id & this.mask) << 1;
    if (this.slots[i] === id) {
      this.slots[i] = -1;
      this.slots[i + 1] = undefined;
    }
    return true;
  }

  /** Slots in the table (for tests). */
  get capacity(): number {
    return this.mask + 1;
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  entries(): IterableIterator<[number, V]> {
    return this.map.entries();
  }

  clear(): void {
    this.map.clear();
    this.resize(capacityFor(0));
  }

  private place(id: number, value: V): void {
    const i = (id & this.mask) << 1;
    this.slots[i] = id;
    this.slots[i + 1] = value;
  }

  private resize(capacity: number): void {
    this.mask = capacity - 1;
    const slots: (number | V | undefined)[] = [];
    for (let i = 0; i < capacity; i++) slots.push(-1, undefined);
    this.slots = slots;
    // The newest ids last, so that they hold their slots.
    for (const [id, v] of this.map) this.place(id, v);
  }
}
