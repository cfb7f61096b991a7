// The bounded queue of a monitor's iterator form: when full, the oldest value update goes (and is
// counted); connection, disconnection and error events are never dropped.

/** What the queue needs to know of an event: value updates have kind 'update'. */
export interface QueuedEvent {
  readonly kind: string;
}

export class EventQueue<E extends QueuedEvent> {
  /** Value updates dropped because the queue was full. */
  overruns = 0;
  private items: Array<E | undefined> = [];
  private head = 0;

  /** `capacity`: events kept before the oldest value update is dropped (at least 1). */
  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  push(ev: E): void {
    if (this.size >= this.capacity) this.dropOldestUpdate();
    this.items.push(ev);
  }

  shift(): E | undefined {
    if (this.head === this.items.length) return undefined;
    const ev = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return ev;
  }

  /**
   * Remove the oldest value update, moving the (few) events queued before it up by one. A queue
   * that holds no value update keeps everything: it may then grow past its capacity.
   */
  private dropOldestUpdate(): void {
    const items = this.items;
    for (let i = this.head; i < items.length; i++) {
      if (items[i]!.kind !== 'update') continue;
      for (let j = i; j > this.head; j--) items[j] = items[j - 1];
      items[this.head++] = undefined;
      this.overruns++;
      return;
    }
  }
}
