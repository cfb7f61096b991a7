// The write path: wait for the channel (the same connection wait as reads), check write access,
// encode the value for the channel's native type, send WRITE_NOTIFY (or a plain WRITE).
import type { ClientCircuit, FailReason, IoHandler } from '../ca/circuit.js';
import type { Channel, ConnectWaiter } from './channel.js';
import { encodePut } from './convert.js';
import { AccessDeniedError, type CaError } from './errors.js';
import type { ChannelManager } from './manager.js';
import type { PutOptions, PutValue } from './options.js';
import { checkTimeout, Pending } from './pending.js';

/** One put of one channel, settling a promise with its own timeout and signal. */
class ChannelWrite implements ConnectWaiter, IoHandler {
  private ioid = 0;
  private waiting = false;
  private circuit: ClientCircuit | undefined;

  constructor(
    private readonly ch: Channel,
    private readonly value: PutValue,
    private readonly notify: boolean,
    private readonly p: Pending<void>,
  ) {}

  start(): void {
    if (this.p.done) return;
    if (this.ch.connected) this.issue();
    else this.wait();
  }

  private wait(): void {
    this.waiting = true;
    this.ch.addWaiter(this);
  }

  channelConnected(): void {
    this.waiting = false;
    this.issue();
  }

  private issue(): void {
    const { ch, p } = this;
    if (p.done) return;
    const t = ch.transport;
    if (!t || !ch.connected) return this.wait();
    if (!ch.canWrite) return p.reject(new AccessDeniedError('no write access', ch.name));
    let enc;
    try {
      enc = encodePut(ch, this.value);
    } catch (e) {
      return p.reject(e);
    }
    const circuit = t.circuit;
    if (!this.notify) {
      circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload);
      return p.resolve();
    }
    this.circuit = circuit;
    this.ioid = circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload, this);
  }

  onReply(): void {
    this.ioid = 0;
    this.p.resolve();
  }

  onFail(reason: FailReason): void {
    this.ioid = 0;
    this.p.reject(this.ch.failureError(reason) as CaError);
  }

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

/** Write a PV: WRITE_NOTIFY and wait for completion unless `wait: false` (a plain WRITE). */
export function writeOnce(mgr: ChannelManager, name: string, value: PutValue, opts: PutOptions): Promise<void> {
  const timeout = checkTimeout(opts.timeout, name);
  const ch = mgr.acquire(name);
  const p = new Pending<void>(name, timeout, opts.signal, () => ch.timeoutError());
  const w = new ChannelWrite(ch, value, opts.wait !== false, p);
  p.onSettle(() => {
    w.cancel();
    mgr.release(ch);
  });
  w.start();
  return p.promise;
}
