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
    const enc = checkedPut(ch, this.value);
    if (enc instanceof Error) {
      p.reject(enc);
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
  // A plain WRITE on a connected channel is one message and nothing to wait for: no timer, no reference.
  const now = opts.wait === false && !opts.signal ? mgr.connectedChannel(name) : undefined;
  if (now) return writeNow(now, value);
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

/** The value encoded for the channel's native type, or why it cannot be written. */
function checkedPut(ch: Channel, value: PutValue): ReturnType<typeof encodePut> | Error {
  if (!ch.canWrite) return new AccessDeniedError('no write access', ch.name);
  try {
    return encodePut(ch, value);
  } catch (e) {
    return e as Error;
  }
}

/** A plain WRITE on a connected channel, sent now. */
function writeNow(ch: Channel, value: PutValue): Promise<void> {
  const enc = checkedPut(ch, value);
  if (enc instanceof Error) return Promise.reject(enc);
  ch.transport!.circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload);
  return Promise.resolve();
}
