// The connection wait every one-shot operation shares, whatever its protocol: send at once when
// the channel is connected, else wait (one waiter object, no closure) and send when it connects;
// stop waiting on cancel.

/** What the wait needs of a channel. */
export interface WaitableChannel<W> {
  readonly connected: boolean;
  addWaiter(w: W): void;
  removeWaiter(w: W): void;
}

export abstract class ConnectionWait<C extends WaitableChannel<never>> {
  private waiting = false;

  constructor(readonly ch: C) {}

  /** The outcome is known (or no longer wanted): nothing more is sent. */
  protected abstract get settled(): boolean;

  /** Send on the channel, which was connected a moment ago (check it again: it may be lost). */
  protected abstract begin(): void;

  /** Send now if the channel is connected, else as soon as it connects. */
  start(): void {
    if (this.settled) return;
    if (this.ch.connected) this.begin();
    else this.wait();
  }

  protected wait(): void {
    this.waiting = true;
    (this.ch as WaitableChannel<this>).addWaiter(this);
  }

  /** The channel's waiter: it connected. */
  channelConnected(): void {
    this.waiting = false;
    this.begin();
  }

  /** The channel's waiter: it closed for good; the wait is over. */
  protected waitEnded(): void {
    this.waiting = false;
  }

  /** Stop waiting for the connection. */
  protected stopWaiting(): void {
    if (this.waiting) {
      this.waiting = false;
      (this.ch as WaitableChannel<this>).removeWaiter(this);
    }
  }
}
