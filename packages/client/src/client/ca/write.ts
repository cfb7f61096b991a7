// The write path: a ChannelOperation (the same connection wait as reads) that checks write access,
// encodes the value for the channel's native type and sends WRITE_NOTIFY (or a plain WRITE).
import type { ClientCircuit, FailReason, IoHandler } from '../../ca/circuit.js';
import type { Channel } from './channel.js';
import { ChannelOperation } from './operation.js';
import { encodePut } from './convert.js';
import { AccessDeniedError, type EpicsError } from '../errors.js';
import type { ChannelManager } from './manager.js';
import type { PutOptions, PutValue } from '../options.js';
import { checkTimeout, Pending } from '../pending.js';

/** One put of one channel, settling a promise with its own timeout and signal. */
class ChannelWrite extends ChannelOperation implements IoHandler {
  constructor(
    ch: Channel,
    private readonly value: PutValue,
    private readonly notify: boolean,
    private readonly p: Pending<void>,
  ) {
    super(ch);
  }

  protected get settled(): boolean {
    return this.p.done;
  }

  /** ChannelOperation: check access, encode for the native type, send WRITE_NOTIFY (or WRITE). */
  protected send(ch: Channel, circuit: ClientCircuit): number {
    const p = this.p;
    if (!ch.canWrite) {
      p.reject(new AccessDeniedError('no write access', ch.name));
      return 0;
    }
    let enc: ReturnType<typeof encodePut>;
    try {
      enc = encodePut(ch, this.value);
    } catch (e) {
      p.reject(e);
      return 0;
    }
    if (this.notify) return circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload, this);
    circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload);
    p.resolve();
    return 0;
  }

  onReply(): void {
    this.ioid = 0;
    this.p.resolve();
  }

  onFail(reason: FailReason): void {
    this.ioid = 0;
    this.p.reject(this.ch.failureError(reason) as EpicsError);
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
