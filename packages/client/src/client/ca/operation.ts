// One request on one channel: wait for the connection (the one connection wait), send once the
// channel is connected (again after a reconnect while no reply came), forget it on cancel. Reads
// (read.ts) and writes (write.ts) build on it; one object per operation, no closures.
import type { ClientCircuit } from '../../ca/circuit.js';
import type { Channel, ConnectWaiter } from './channel.js';
import { ConnectionWait } from '../connect-wait.js';

export abstract class ChannelOperation extends ConnectionWait<Channel> implements ConnectWaiter {
  /** The request in flight (0: none). */
  protected ioid = 0;
  private circuit: ClientCircuit | undefined;

  /** Send the request on the connected channel's circuit; returns its ioid, or 0 when no reply is awaited. */
  protected abstract send(ch: Channel, circuit: ClientCircuit): number;

  protected begin(): void {
    if (this.settled) return;
    const t = this.ch.transport;
    // Lost again before we got here: wait for the next connection.
    if (!t || !this.ch.connected) return this.wait();
    this.circuit = t.circuit;
    this.ioid = this.send(this.ch, t.circuit);
  }

  /** Stop waiting for the connection, and forget the request in flight (a late reply is ignored). */
  cancel(): void {
    this.stopWaiting();
    if (this.ioid) {
      this.circuit?.abandon(this.ioid);
      this.ioid = 0;
    }
  }
}
