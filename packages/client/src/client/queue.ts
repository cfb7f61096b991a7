// The bounded queue of a monitor's iterator form: when it is full the oldest queued value is
// dropped (and counted as an overrun); connection and error events are never dropped.

/** What the queue needs to know of an event: value updates have kind 'update'. */
export interface QueuedEvent {
  readonly kind: string;
}

export class EventQueue<E extends QueuedEvent> {
  /** Values dropped to make room. */
  overruns = 0;
  /** Values queued now (the rest are connection and error events). */
  values = 0;
  private ring: Array<E | undefined>;
  private head = 0;
  private size = 0;

  constructor(private readonly limit: number) {
    this.ring = new Array(limit);
  }

  get length(): number {
    return this.size;
  }

  /** Queue `ev`; true when the oldest value was dropped to make room. */
  push(ev: E): boolean {
    const dropped = this.size >= this.limit && this.dropOldestValue();
    if (dropped) {
      this.overruns++;
      this.values--;
    }
    if (ev.kind === 'update') this.values++;
    if (this.size === this.ring.length) this.grow();
    this.ring[(this.head + this.size) % this.ring.length] = ev;
    this.size++;
    return dropped;
  }

  shift(): E | undefined {
    if (this.size === 0) return undefined;
    const ev = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.ring.length;
    this.size--;
    if (ev!.kind === 'update') this.values--;
    return ev;
  }

  /**
   * Remove the oldest value. Usually it is at the head; otherwise the connection events before it
   * move up one slot. False when no value is queued (then the queue grows past its limit:
   * only connection and error events can make it do so).
   */
  private dropOldestValue(): boolean {
    const ring = this.ring;
    const cap = ring.length;
    let k = 0;
    while (k < this.size && ring[(this.head + k) % cap]!.kind !== 'update') k++;
    if (k === this.size) return false;
    for (let j = k; j > 0; j--) ring[(this.head + j) % cap] = ring[(this.head + j - 1) % cap];
    ring[this.head] = undefined;
    this.head = (this.head + 1) % cap;
    this.size--;
    return true;
  }

  private grow(): void {
    const bigger = new Array<E | undefined>(Math.max(4, this.ring.length * 2));
    for (let i = 0; i < this.size; i++) bigger[i] = this.ring[(this.head + i) % this.ring.length];
    this.ring = bigger;
    this.head = 0;
  }
}
