// The operation INITs of one PV Access connection: at most INITS_IN_FLIGHT unanswered, the others
// waiting in order. A pvxs server (QSRV) that finds its connection's send queue full when it
// accepts an INIT defers the reply, and then fails the operation ("Create implied error") and
// writes a stray empty reply after it: 1,000 monitors opened at once over a real network lose
// two in three. With a window the server's replies never pile up that far.
import type { Message } from './messages.js';

/** INITs sent and not yet answered, at most (their replies, with full types, stay under 64 KB). */
const INITS_IN_FLIGHT = 64;

export class InitWindow {
  private waiting: Array<{ id: number; m: Message }> = [];
  private head = 0;
  /** The ids in `waiting` still to go out (one taken out early stays there, skipped). */
  private readonly queued = new Set<number>();
  private readonly inFlight = new Set<number>();

  /** INITs waiting for a slot. */
  get queuedCount(): number {
    return this.queued.size;
  }

  /** INIT `id` (message `m`) may go out now: true (it counts as in flight), or it waits. */
  admit(id: number, m: Message): boolean {
    if (this.inFlight.size < INITS_IN_FLIGHT && this.queued.size === 0) {
      this.inFlight.add(id);
      return true;
    }
    this.waiting.push({ id, m });
    this.queued.add(id);
    return false;
  }

  /** INIT `id` went out and is not answered yet. */
  sent(id: number): boolean {
    return this.inFlight.has(id);
  }

  /** Take INIT `id` out of the queue before it went out: false when it was not waiting. */
  unqueue(id: number): boolean {
    return this.queued.delete(id);
  }

  /** INIT `id` was answered (or forgotten while in flight): the INITs that may go out now, each counted in flight. */
  release(id: number): Message[] {
    if (!this.inFlight.delete(id)) return [];
    const out: Message[] = [];
    while (this.inFlight.size < INITS_IN_FLIGHT && this.head < this.waiting.length) {
      const w = this.waiting[this.head++]!;
      if (!this.queued.delete(w.id)) continue; // taken out before its turn
      this.inFlight.add(w.id);
      out.push(w.m);
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** The connection is gone. */
  clear(): void {
    this.waiting = [];
    this.head = 0;
    this.queued.clear();
    this.inFlight.clear();
  }
}
