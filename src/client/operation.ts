// One request on one channel: wait for the connection (the one connection wait), send once the
// channel is connected (again after a reconnect while no reply came), forget it on cancel. Reads
// (read.ts) and writes (write.ts) build on it; one object per operation, no closures.
import type { ClientCircuit } from '../ca/circuit.js';
import type { Channel, ConnectWaiter } from './channel.js';

export abstract class ChannelOperation implements ConnectWaiter {
  /** The request in flight (0: none). */
  protected ioid = 0;
  private waiting = false;
  private circuit: ClientCircuit | undefined;

  constructor(readonly ch: Channel) {}

  /** The outcome is known (or no longer wanted): nothing more is sent. */
  protected abstract get settled(): boolean;

  /** Send the request on the connected channel's circuit; returns its ioid, or 0 when no reply is awaited. */
  protected abstract send(ch: Channel, circuit: ClientCircuit): number;

  /** Send now if the channel is connected, else as soon as it connects. */
  start(): void {
    if (this.settled) return;
    if (this.ch.connected) this.issue();
    else this.wait();
  }

  private wait(): void {
    this.waiting = true;
    this.ch.addWaiter(this);
  }

  /** ConnectWaiter */
  channelConnected(): void {
    this.waiting = false;
    this.issue();
  }

  private issue(): void {
    if (this.settled) return;
    const t = this.ch.transport;
    // Lost again before we got here: wait for the next connection.
    if (!t || !this.ch.connected) return this.wait();
    this.circuit = t.circuit;
    this.ioid = this.send(this.ch, t.circuit);
  }

  /** Stop waiting for the connection, and forget the request in flight (a late reply is ignored). */
  cancel(): void {
    if (this.waiting) {
      this.waiting = false;
      this.ch.removeWaiter(this);
    }
    if (this.ioid) {
      this.circuit?.abandon(this.ioid);
      this.ioid = 0;
    }
  }
}
