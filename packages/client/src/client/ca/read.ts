// The one read path: wait for the channel, plan the request (DBR type and count), check read
// access, issue READ_NOTIFY and decode the reply; used by get and by every name of a snapshot.
import { type CaValue, DECODE_HOST_ORDER, DECODE_OWNED, type DbrMetadata, decodeDbr, Reading, type ReadingFactory } from '../../ca/dbr.js';
import type { ClientCircuit, FailReason, IoHandler } from '../../ca/circuit.js';
import type { Header } from '../../ca/header.js';
import type { Channel } from './channel.js';
import { ChannelOperation } from './operation.js';
import { planRead, type ReadPlan } from './convert.js';
import { AccessDeniedError, type EpicsError, ProtocolError } from '../errors.js';
import type { ChannelManager } from './manager.js';
import type { GetOptions, ReadOptions } from '../options.js';
import { checkTimeout, Pending } from '../pending.js';

/** The caller's read options, planned per channel; the last plan is reused while channels look alike. */
export class ReadSpec {
  private planType = -1;
  private planCount = -1;
  private planVersion = -1;
  private lastPlan: ReadPlan | undefined;

  constructor(
    readonly opts: ReadOptions,
    readonly maxArrayBytes: number,
  ) {}

  /** The plan for a connected channel (throws a BadArgumentError when the options do not fit it). */
  planFor(ch: Channel, serverVersion: number): ReadPlan {
    if (ch.nativeType === this.planType && ch.nativeCount === this.planCount && serverVersion === this.planVersion) return this.lastPlan!;
    const plan = planRead(ch, this.opts, this.maxArrayBytes, serverVersion);
    this.planType = ch.nativeType;
    this.planCount = ch.nativeCount;
    this.planVersion = serverVersion;
    this.lastPlan = plan;
    return plan;
  }
}

/** Decode a READ_NOTIFY or EVENT_ADD payload as `plan` asked for it (undefined: undecodable). */
export function decodeReply<R extends Reading = Reading>(
  plan: ReadPlan,
  h: Header,
  payload: Uint8Array,
  owned: boolean,
  hostOrder: boolean,
  factory?: ReadingFactory<R>,
): R | undefined {
  const flags = plan.decodeFlags | (owned ? DECODE_OWNED : 0) | (hostOrder ? DECODE_HOST_ORDER : 0);
  return decodeDbr(h.dataType, h.dataCount, payload, flags, factory);
}

/**
 * One read of one channel, from the wait for its connection to the decoded reply. Subclasses
 * say where the outcome goes, and may decode into a Reading of their own (`makeReading`); one
 * object per read (no closures).
 */
export abstract class ChannelRead extends ChannelOperation implements IoHandler, ReadingFactory {
  private plan: ReadPlan | undefined;

  constructor(
    ch: Channel,
    private readonly spec: ReadSpec,
  ) {
    super(ch);
  }

  protected abstract succeeded(r: Reading): void;
  protected abstract failed(e: EpicsError): void;

  /** ReadingFactory: what the reply is decoded into (a plain Reading unless a subclass says). */
  makeReading(
    value: CaValue,
    dbrType: number,
    count: number,
    status: number,
    severity: number,
    secondsPastEpoch: number,
    nanoseconds: number,
    metadata: DbrMetadata | undefined,
  ): Reading {
    return new Reading(value, dbrType, count, status, severity, secondsPastEpoch, nanoseconds, metadata);
  }

  /** ChannelOperation: check access, plan, and send READ_NOTIFY. */
  protected send(ch: Channel, circuit: ClientCircuit): number {
    if (!ch.canRead) {
      this.failed(new AccessDeniedError('no read access', ch.name));
      return 0;
    }
    let plan: ReadPlan;
    try {
      plan = this.spec.planFor(ch, circuit.serverVersion);
    } catch (e) {
      this.failed(e as EpicsError);
      return 0;
    }
    this.plan = plan;
    return circuit.read(ch.sid, plan.dbrType, plan.count, this);
  }

  /** IoHandler */
  onReply(h: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void {
    this.ioid = 0;
    const r = decodeReply(this.plan!, h, payload, owned, hostOrder, this);
    if (r) this.succeeded(r);
    else
      this.failed(new ProtocolError(`undecodable reply (type ${h.dataType}, count ${h.dataCount}, ${payload.length} bytes)`, this.ch.name));
  }

  /** IoHandler */
  onFail(reason: FailReason): void {
    this.ioid = 0;
    this.failed(this.ch.failureError(reason));
  }
}

/** A get: one read settling a promise with its own timeout and signal. */
class GetRead extends ChannelRead {
  constructor(
    ch: Channel,
    spec: ReadSpec,
    private readonly p: Pending<Reading>,
  ) {
    super(ch, spec);
  }

  protected get settled(): boolean {
    return this.p.done;
  }

  protected succeeded(r: Reading): void {
    this.p.resolve(r);
  }

  protected failed(e: EpicsError): void {
    this.p.reject(e);
  }
}

/** Read a PV once: value, alarm, timestamp and metadata as the options ask ('full': two reads merged). */
export function readOnce(mgr: ChannelManager, name: string, opts: GetOptions): Promise<Reading> {
  if (opts.form === 'full') return readFull(mgr, name, opts);
  return readForm(mgr, name, opts as ReadOptions & GetOptions);
}

/**
 * Value, alarm, time and metadata in one call: DBR_TIME and DBR_CTRL requested together on the
 * one channel, merged into a reading with the TIME form's value and the CTRL form's metadata.
 */
async function readFull(mgr: ChannelManager, name: string, opts: GetOptions): Promise<Reading> {
  const [t, c] = await Promise.all([readForm(mgr, name, { ...opts, form: 'time' }), readForm(mgr, name, { ...opts, form: 'ctrl' })]);
  return new Reading(t.value, t.dbrType, t.count, t.status, t.severity, t.secondsPastEpoch, t.nanoseconds, c.metadata ?? {});
}

function readForm(mgr: ChannelManager, name: string, opts: GetOptions & ReadOptions): Promise<Reading> {
  const timeout = checkTimeout(opts.timeout, name);
  const ch = mgr.acquire(name);
  const p = new Pending<Reading>(name, timeout, opts.signal, () => ch.timeoutError());
  const read = new GetRead(ch, new ReadSpec(opts, mgr.config.maxArrayBytes), p);
  p.onSettle(() => {
    read.cancel();
    mgr.release(ch);
  });
  read.start();
  return p.promise;
}
