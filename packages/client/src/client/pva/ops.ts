// One-shot PV Access operations on a channel: the connection wait, then GET (INIT, execute,
// destroy), PUT (INIT, put the given fields, destroy) or GET_FIELD; each settles a Pending.
import { BitSet } from '../../pva/bitset.js';
import { Cmd } from '../../pva/constants.js';
import { buildPvRequest, type PvRequestOptions } from '../../pva/pvrequest.js';
import type { ClientSession, PvaFailReason, OpHandler } from '../../pva/session.js';
import { isSuccess, type Status } from '../../pva/status.js';
import { bitOffset, formatType, type FieldDesc, type ScalarType, type StructureDesc } from '../../pva/types.js';
import { arrayOf, defaultValue, setField, type NumericArray, type PvStructure, type PvValue, type Typed } from '../../pva/values.js';
import { BadArgumentError, type EpicsError, ClosedError, DisconnectedError, ProtocolError, RemoteError } from '../errors.js';
import { ConnectionWait } from '../connect-wait.js';
import type { PvaChannel, PvaConnectWaiter } from './channel.js';

/** The pvRequest of a call: a string ("field(value,alarm)record[process=true]") or its parts. */
export type PvaRequest = string | PvRequestOptions;

/** What a request's failure becomes, as the channel saw it. */
export function pvaFailure(ch: PvaChannel, reason: PvaFailReason): EpicsError {
  if (reason.kind === 'disconnected')
    return new DisconnectedError(`the connection was lost${reason.message ? ` (${reason.message})` : ''}`, ch.name);
  if (reason.kind === 'protocol') return new ProtocolError(`protocol error from the server: ${reason.message}`, ch.name);
  return remoteError(ch.name, reason.status);
}

export function remoteError(name: string, s: Status): RemoteError {
  return RemoteError.pva(s.type, s.message, name);
}

const requestCache = new Map<string, Typed>();

/** The pvRequest structure of a call (string forms are built once and kept). */
export function pvRequestOf(req: PvaRequest | undefined, fallback: string): Typed {
  const r = req ?? fallback;
  if (typeof r !== 'string') return buildPvRequest(r);
  let t = requestCache.get(r);
  if (!t) {
    try {
      t = buildPvRequest(r);
    } catch (e) {
      throw new BadArgumentError(`bad pvRequest '${r}': ${(e as Error).message}`);
    }
    if (requestCache.size < 64) requestCache.set(r, t);
  }
  return t;
}

/**
 * One request on one channel: waits for the connection, sends once connected (again after a
 * reconnect that came before its reply), forgets its request on cancel.
 */
export abstract class PvaOperation extends ConnectionWait<PvaChannel> implements PvaConnectWaiter, OpHandler {
  protected requestId = 0;
  protected session: ClientSession | undefined;

  /** Send the first request on the connected channel. */
  protected abstract issue(): void;
  protected abstract failed(e: EpicsError): void;

  channelClosed(): void {
    this.waitEnded();
    if (!this.settled) this.failed(new ClosedError(undefined, this.ch.name));
  }

  protected begin(): void {
    if (this.settled) return;
    if (this.ch.state === 'closed') return this.channelClosed();
    const t = this.ch.transport;
    if (!t || !this.ch.connected) return this.wait();
    this.session = t.session;
    this.issue();
  }

  /** OpHandler: the request ended without a reply. A lost connection waits for the next one. */
  onFail(reason: PvaFailReason): void {
    this.requestId = 0;
    if (this.ch.state === 'closed') return this.channelClosed();
    if (reason.kind === 'disconnected' && !this.settled) return this.wait();
    this.failed(pvaFailure(this.ch, reason));
  }

  /** Stop waiting and destroy the request on the server. */
  cancel(): void {
    this.stopWaiting();
    if (this.requestId) {
      this.session?.destroy(this.requestId);
      this.requestId = 0;
    }
  }
}

/**
 * A GET: INIT with the pvRequest, execute, then the reply's structure. With a `key` (the pvRequest
 * as written) a channel read before keeps its request for the next GET, which skips the INIT.
 */
export abstract class PvaGet extends PvaOperation {
  /** The request stays on the server after the reply (kept, or destroyed on settling). */
  private keeping = false;

  constructor(
    ch: PvaChannel,
    private readonly request: Typed,
    private readonly key?: string,
  ) {
    super(ch);
  }

  protected abstract succeeded(type: StructureDesc, value: PvStructure): void;

  protected issue(): void {
    const session = this.session!;
    const kept = this.key === undefined ? 0 : this.ch.takeKept(Cmd.GET, this.key, session, this);
    this.keeping = kept !== 0 || (this.key !== undefined && this.ch.readBefore);
    if (kept) {
      this.requestId = kept;
      this.type = session.typeOf(kept);
      return session.get(kept, false);
    }
    this.requestId = session.init(Cmd.GET, this.ch.sid, this.request, this);
  }

  /** The reply's type (the session forgets a request once its last reply came). */
  private type: StructureDesc | undefined;

  onInit(status: Status, type: FieldDesc | null): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.failed(remoteError(this.ch.name, status));
    }
    this.type = type as StructureDesc;
    this.session!.get(this.requestId, !this.keeping);
  }

  onReply(status: Status, value: PvStructure | undefined, changed: BitSet | undefined): void {
    const id = this.requestId;
    const type = this.session!.typeOf(id) ?? this.type;
    // Not kept, the server destroyed the request with its reply; kept, a failure destroys it on settling.
    if (!this.keeping) this.requestId = 0;
    if (!isSuccess(status)) return this.failed(remoteError(this.ch.name, status));
    if (!value || !type || !changed) return this.failed(new ProtocolError('GET reply without data', this.ch.name));
    if (this.key !== undefined) {
      this.ch.readBefore = true;
      if (this.keeping && this.ch.keep(Cmd.GET, this.key, this.session!, id)) this.requestId = 0;
    }
    // The value holds every field of the type (defaults where the server marked none), as pvxs gives it.
    this.succeeded(type, value);
  }
}

/** The value a put accepts: a plain value (for the `value` field) or fields by dotted path. */
export type PvaPutValue = PvValue | { [path: string]: PvValue };

/** The type of a field by dotted path ("alarm.severity"). */
export function fieldOf(type: StructureDesc, path: string): FieldDesc | undefined {
  let cur: FieldDesc = type;
  for (const part of path.split('.')) {
    if (cur.kind !== 'structure') return undefined;
    const f: FieldDesc | undefined = cur.fields.find((x) => x.name === part)?.type;
    if (!f) return undefined;
    cur = f;
  }
  return cur;
}

/** Convert a JS value to what the field's type holds (numbers, bigints, strings; arrays element-wise). */
function coerce(desc: FieldDesc, v: PvValue, name: string, path: string): PvValue {
  const bad = (why: string): never => {
    throw new BadArgumentError(`cannot put ${String(v)} to ${path} (${formatType(desc)}): ${why}`, name);
  };
  if (desc.kind === 'scalar') {
    if (typeof v === 'object' && v !== null && (Array.isArray(v) || ArrayBuffer.isView(v))) {
      // One element is the scalar, as a CA put of count 1; more cannot go to one value.
      const a = v as ArrayLike<PvValue>;
      return a.length === 1 ? coerce(desc, a[0]!, name, path) : bad(`an array of ${a.length} elements to a scalar`);
    }
    const t = desc.type;
    if (t === 'string') return typeof v === 'string' ? v : String(v);
    if (t === 'boolean')
      return typeof v === 'boolean'
        ? v
        : typeof v === 'number'
          ? v !== 0
          : v === 'true'
            ? true
            : v === 'false'
              ? false
              : bad('not a boolean');
    if (t === 'long' || t === 'ulong') {
      try {
        return typeof v === 'bigint' ? v : BigInt(typeof v === 'string' ? v.trim() : (v as number));
      } catch {
        return bad('not an integer');
      }
    }
    const n =
      typeof v === 'number'
        ? v
        : typeof v === 'bigint'
          ? Number(v)
          : typeof v === 'boolean'
            ? +v
            : typeof v === 'string' && v.trim() !== ''
              ? Number(v)
              : NaN;
    if (Number.isNaN(n) && !(typeof v === 'number' || (typeof v === 'string' && /^nan$/i.test(v.trim())))) bad('not a number');
    if (t !== 'float' && t !== 'double' && !Number.isInteger(n)) bad('not an integer');
    return n;
  }
  if (desc.kind === 'scalarArray') {
    if (typeof v !== 'object' || v === null || !('length' in v)) return coerce(desc, [v] as PvValue, name, path);
    if (ArrayBuffer.isView(v)) {
      const typed = asTypedArray(desc.type, v as NumericArray, name, path);
      if (typed) return typed;
    }
    const el = { kind: 'scalar', type: desc.type } as FieldDesc;
    return Array.from(v as ArrayLike<PvValue>, (x) => coerce(el, x, name, path)) as PvValue;
  }
  if (desc.kind === 'structure' && typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
    // A structure given whole: its members converted, those not given at their defaults.
    const out = defaultValue(desc) as PvStructure;
    for (const [k, x] of Object.entries(v as PvStructure)) {
      const f = desc.fields.find((m) => m.name === k);
      if (!f) bad(`no field '${k}'`);
      setField(out, k, coerce(f!.type, x, name, `${path}.${k}`));
    }
    return out;
  }
  return v;
}

/**
 * A typed array as a numeric field's elements: itself when it is already of the field's type (the
 * encoder then writes its bytes at once), else converted, an integer field taking integers only.
 * Undefined for a boolean or string field.
 */
function asTypedArray(type: ScalarType, v: NumericArray, name: string, path: string): NumericArray | undefined {
  const C = arrayOf(type);
  if (!C) return undefined;
  if (v instanceof C) return v;
  const n = v.length;
  const out = new C(n) as unknown as { [i: number]: number | bigint };
  const big = type === 'long' || type === 'ulong';
  const integer = big || (type !== 'float' && type !== 'double');
  for (let i = 0; i < n; i++) {
    const x = v[i]!;
    if (typeof x === 'bigint') out[i] = big ? x : Number(x);
    else {
      if (integer && !Number.isInteger(x))
        throw new BadArgumentError(`cannot put ${x} to ${path}[${i}] (${type}): not ${Number.isNaN(x) ? 'a number' : 'an integer'}`, name);
      out[i] = big ? BigInt(x) : x;
    }
  }
  return out as unknown as NumericArray;
}

/**
 * The structure and changed bits of a put: a plain value goes to `value` (an NTEnum's index,
 * or its choice by name when `enumChoices` are known), an object's keys are field paths. On a
 * `base` (a server's present value) the fields given replace its own, which is not changed;
 * `paths` are the fields given, as written.
 */
export function putData(
  type: StructureDesc,
  v: PvaPutValue,
  name: string,
  enumChoices?: string[],
  base?: PvStructure,
): { value: PvStructure; changed: BitSet; paths: string[] } {
  const value = base ? { ...base } : (defaultValue(type) as PvStructure);
  const changed = new BitSet();
  const paths: string[] = [];
  const plain = typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v);
  const entries: [string, PvValue][] = plain ? [['value', v as PvValue]] : Object.entries(v as Record<string, PvValue>);
  for (let [path, x] of entries) {
    let desc = fieldOf(type, path);
    if (desc?.kind === 'structure' && desc.id === 'enum_t' && path === 'value' && (typeof x !== 'object' || x === null)) {
      if (typeof x === 'string') {
        const i = enumChoices?.indexOf(x) ?? -1;
        if (i < 0) throw new BadArgumentError(`'${x}' is not one of the choices ${JSON.stringify(enumChoices ?? [])}`, name);
        x = i;
      }
      path = 'value.index';
      desc = fieldOf(type, path);
    }
    if (!desc) throw new BadArgumentError(`the channel's structure has no field '${path}'`, name);
    const bit = bitOffset(type, path)!;
    changed.set(bit);
    paths.push(path);
    const parts = path.split('.');
    let obj = value;
    // The structures on the path are copies: a base's own are left as they were.
    for (const p of parts.slice(0, -1)) obj = obj[p] = { ...(obj[p] as PvStructure) };
    obj[parts[parts.length - 1]!] = coerce(desc, x, name, path);
  }
  if (changed.isEmpty()) throw new BadArgumentError('nothing to put', name);
  return { value, changed, paths };
}
