// get, put, GET_FIELD and RPC over PV Access for the Context: each call acquires the channel, runs
// one operation against its own timeout and signal, and releases the channel when it settles.
import { Cmd } from '../../pva/constants.js';
import { isSuccess, type Status } from '../../pva/status.js';
import type { FieldDesc, StructureDesc } from '../../pva/types.js';
import { typedOf } from '../../pva/infer.js';
import type { PvStructure, Typed } from '../../pva/values.js';
import { BadArgumentError, type EpicsError, ProtocolError } from '../errors.js';
import type { CallOptions } from '../options.js';
import { checkTimeout, Pending } from '../pending.js';
import type { PvaChannel } from './channel.js';
import type { PvaManager } from './manager.js';
import { FieldError, fieldAtPath, putData, type PvaPutValue } from '../../pva/fields.js';
import { PvaGet, PvaOperation, pvRequestOf, remoteError, type PvaRequest } from './ops.js';
import { PvaReading } from './reading.js';

export interface PvaReadOptions {
  /** PV Access: the pvRequest, e.g. "field(value,alarm,timeStamp)" (default: every field). */
  request?: PvaRequest;
}

class GetOnce extends PvaGet {
  constructor(
    ch: PvaChannel,
    request: Typed,
    key: string | undefined,
    private readonly p: Pending<PvaReading>,
  ) {
    super(ch, request, key);
  }
  protected get settled(): boolean {
    return this.p.done;
  }
  protected succeeded(type: StructureDesc, value: PvStructure): void {
    this.p.resolve(new PvaReading(type, value));
  }
  protected failed(e: EpicsError): void {
    this.p.reject(e);
  }
}

/** The pvRequest as written, under which a request may be kept for the next call (undefined: not kept). */
function keyOf(request: PvaRequest | undefined): string | undefined {
  return typeof request === 'string' || request === undefined ? (request ?? '') : undefined;
}

/** Run one operation on a name: acquire, start, release on settling. */
function run<T>(mgr: PvaManager, name: string, opts: CallOptions, make: (ch: PvaChannel, p: Pending<T>) => PvaOperation): Promise<T> {
  const timeout = checkTimeout(opts.timeout, name);
  const ch = mgr.acquire(name);
  const p = new Pending<T>(name, timeout, opts.signal, () => ch.timeoutError());
  let op: PvaOperation;
  try {
    op = make(ch, p);
  } catch (e) {
    mgr.release(ch);
    throw e;
  }
  p.onSettle(() => {
    op.cancel();
    mgr.release(ch);
  });
  op.start();
  return p.promise;
}

export function pvaGet(mgr: PvaManager, name: string, opts: CallOptions & PvaReadOptions): Promise<PvaReading> {
  const request = pvRequestOf(opts.request, '');
  return run<PvaReading>(mgr, name, opts, (ch, p) => new GetOnce(ch, request, keyOf(opts.request), p));
}

/** An operation whose end settles one call's Pending. */
abstract class OnceOperation<T> extends PvaOperation {
  constructor(
    ch: PvaChannel,
    protected readonly p: Pending<T>,
  ) {
    super(ch);
  }
  protected get settled(): boolean {
    return this.p.done;
  }
  protected failed(e: EpicsError): void {
    this.p.reject(e);
  }
}

/** A PUT: INIT, (a get-back when an enum is put by name), the put, its completion. */
class PutOnce extends OnceOperation<void> {
  private type: StructureDesc | undefined;
  constructor(
    ch: PvaChannel,
    private readonly request: Typed,
    /** The pvRequest as written, under which the request may be kept for the next put (undefined: not kept). */
    private readonly key: string | undefined,
    private readonly value: PvaPutValue,
    private readonly waitDone: boolean,
    p: Pending<void>,
  ) {
    super(ch, p);
  }

  protected issue(): void {
    const session = this.session!;
    const kept = this.key === undefined ? 0 : this.ch.takeKept(Cmd.PUT, this.key, session, this);
    if (kept) {
      this.requestId = kept;
      return this.initialised(session.typeOf(kept)!);
    }
    this.type = undefined;
    this.requestId = session.init(Cmd.PUT, this.ch.sid, this.request, this);
  }

  onInit(status: Status, type: FieldDesc | null): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.failed(remoteError(this.ch.name, status));
    }
    if (type?.kind !== 'structure') return this.failed(new ProtocolError('PUT INIT reply without a structure type', this.ch.name));
    this.initialised(type);
  }

  private initialised(type: StructureDesc): void {
    this.type = type;
    const v = type.fields.find((f) => f.name === 'value')?.type;
    if (typeof this.value === 'string' && v?.kind === 'structure' && v.id === 'enum_t') this.session!.putGet(this.requestId);
    else this.send();
  }

  private send(choices?: string[]): void {
    let data: ReturnType<typeof putData>;
    try {
      data = putData(this.type!, this.value, choices);
    } catch (e) {
      return this.failed(e instanceof FieldError ? new BadArgumentError(e.message, this.ch.name) : (e as EpicsError));
    }
    this.session!.put(this.requestId, data.changed, data.value);
    if (!this.waitDone) this.p.resolve();
  }

  onReply(status: Status, value: PvStructure | undefined): void {
    if (!isSuccess(status)) return this.failed(remoteError(this.ch.name, status));
    if (value) {
      // the get-back of an enum put by name: its choices
      const e = value.value as PvStructure | undefined;
      return this.send(Array.isArray(e?.choices) ? (e!.choices as string[]) : []);
    }
    if (this.key !== undefined && this.ch.keep(Cmd.PUT, this.key, this.session!, this.requestId)) this.requestId = 0;
    this.p.resolve();
  }
}

export interface PvaPutOptions extends CallOptions {
  /** Wait for the server to complete the put (default), or resolve once it is sent. */
  wait?: boolean;
  /** PV Access: the pvRequest of the put, e.g. "record[process=true]". */
  request?: PvaRequest;
}

export function pvaPut(mgr: PvaManager, name: string, value: PvaPutValue, opts: PvaPutOptions): Promise<void> {
  if (value === undefined) throw new BadArgumentError('cannot write undefined', name);
  const request = pvRequestOf(opts.request, '');
  // A put that does not wait for its reply cannot hand its request on: it neither takes nor keeps one.
  const wait = opts.wait !== false;
  const key = wait ? keyOf(opts.request) : undefined;
  return run<void>(mgr, name, opts, (ch, p) => new PutOnce(ch, request, key, value, wait, p));
}

class GetFieldOnce extends OnceOperation<FieldDesc> {
  constructor(
    ch: PvaChannel,
    private readonly field: string,
    p: Pending<FieldDesc>,
  ) {
    super(ch, p);
  }
  protected issue(): void {
    this.requestId = this.session!.getField(this.ch.sid, this.field, this);
  }
  onReply(status: Status, _v: unknown, _c: unknown, type: FieldDesc | null): void {
    this.requestId = 0;
    if (!isSuccess(status)) return this.failed(remoteError(this.ch.name, status));
    if (!type) return this.failed(new ProtocolError('GET_FIELD reply without a type', this.ch.name));
    // Servers may answer with the whole type (pvxs does): then the field is looked up here.
    if (this.field && type.kind === 'structure') {
      const sub = fieldAtPath(type, this.field);
      if (sub) return this.p.resolve(sub);
      const whole = type.id.startsWith('epics:nt/') || type.fields.some((f) => f.name === 'value');
      if (whole) return this.failed(new BadArgumentError(`the channel's structure has no field '${this.field}'`, this.ch.name));
    }
    this.p.resolve(type);
  }
}

/** GET_FIELD: the channel's type description (or one field's, by dotted path). */
export function pvaGetField(mgr: PvaManager, name: string, field: string, opts: CallOptions): Promise<FieldDesc> {
  return run<FieldDesc>(mgr, name, opts, (ch, p) => new GetFieldOnce(ch, field, p));
}

/** RPC: INIT with the pvRequest, one execution with the argument (destroyed with its reply), the server's result. */
/** An RPC's argument: a plain object (its type inferred: numbers as doubles, ...) or a typed structure. */
export type RpcArgument = Record<string, unknown> | Typed;

export interface PvaRpcOptions extends CallOptions {
  /** The pvRequest of the RPC's INIT (default: empty). */
  request?: PvaRequest;
}

class RpcOnce extends OnceOperation<PvaReading | undefined> {
  constructor(
    ch: PvaChannel,
    private readonly request: Typed,
    private readonly argument: Typed,
    p: Pending<PvaReading | undefined>,
  ) {
    super(ch, p);
  }
  protected issue(): void {
    this.requestId = this.session!.init(Cmd.RPC, this.ch.sid, this.request, this);
  }
  onInit(status: Status): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.failed(remoteError(this.ch.name, status));
    }
    this.session!.rpc(this.requestId, this.argument, true);
  }
  onReply(status: Status, value: PvStructure | undefined, _c: unknown, type: FieldDesc | null): void {
    this.requestId = 0;
    if (!isSuccess(status)) return this.failed(remoteError(this.ch.name, status));
    if (!type) return this.p.resolve(undefined);
    if (type.kind !== 'structure' || !value) return this.failed(new ProtocolError('RPC reply that is not a structure', this.ch.name));
    this.p.resolve(new PvaReading(type, value));
  }
}

export function pvaRpc(
  mgr: PvaManager,
  name: string,
  argument: RpcArgument | undefined,
  opts: PvaRpcOptions,
): Promise<PvaReading | undefined> {
  let arg: Typed;
  try {
    arg = typedOf(argument ?? {});
  } catch (e) {
    throw new BadArgumentError(`bad RPC argument: ${(e as Error).message}`, name);
  }
  const request = pvRequestOf(opts.request, '');
  return run<PvaReading | undefined>(mgr, name, opts, (ch, p) => new RpcOnce(ch, request, arg, p));
}
