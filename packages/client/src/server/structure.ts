// A structure a server publishes over PV Access only: an NTTable, or any structure of the app's,
// with posts of the fields that changed; or an RPC service (a channel with a handler and no value).
// Puts and RPC calls go to the app's handlers with who sent them. Nothing here does I/O.
import { putData } from '../pva/fields.js';
import { typedOf } from '../pva/infer.js';
import type { StructureDesc } from '../pva/types.js';
import type { PvStructure, Typed } from '../pva/values.js';
import { type Access, type AccessRule, accessFor, CHANGE_GONE, CHANGE_VALUE, type Caller, timeOf } from './pv.js';

/** Fields by path ("value", "alarm.severity", "value.column"), plain values converted to the field's type. */
export type StructureFields = Record<string, unknown>;

/** A put to a structure: the value with the fields put (the others as they are now), and their paths. */
export interface StructurePut {
  value: PvStructure;
  changed: string[];
  peer: Caller;
}

/** The app's answer: accept the fields put, accept and post other fields instead, or refuse with a message. */
export type StructurePutOutcome = { accept: true; fields?: StructureFields } | { accept: false; message: string };
export type StructurePutHandler = (put: StructurePut) => StructurePutOutcome | Promise<StructurePutOutcome> | void | Promise<void>;

/** An RPC call: the client's argument (null: none) and who sent it. */
export interface RpcCall {
  argument: Typed | null;
  peer: Caller;
}
/** An RPC's result: a plain object (its type inferred, as for a structure's value), a typed structure, or nothing. */
export type RpcResult = Record<string, unknown> | Typed | undefined;
/** An RPC handler; a throw (or a rejection) is the call's error, its message sent to the client. */
export type RpcHandler = (call: RpcCall) => RpcResult | Promise<RpcResult>;

export interface StructureDefinition {
  /** The structure: a plain object (numbers as doubles, ...: pva.typedOf) or a typed one. None: the channel serves RPC only. */
  value?: Record<string, unknown> | Typed;
  /** The type id of a structure given as a plain object (e.g. "epics:nt/NTTable:1.0"; default "structure"). */
  id?: string;
  /** Puts refused. */
  readOnly?: boolean;
  /** Each client's access, by who it is (as a PV's). */
  access?: AccessRule;
  onPut?: StructurePutHandler;
  onRpc?: RpcHandler;
}

export type StructureListener = (s: ServedStructure, changes: number, paths: readonly string[]) => void;

export class ServedStructure {
  /** Undefined: an RPC service, with no value to get, put or monitor. */
  readonly type: StructureDesc | undefined;
  readOnly: boolean;
  onPut: StructurePutHandler | undefined;
  onRpc: RpcHandler | undefined;
  access: AccessRule | undefined;
  private current: PvStructure;
  private readonly timeStamped: boolean;
  private readonly listenerSet = new Set<StructureListener>();

  constructor(
    readonly name: string,
    def: StructureDefinition,
  ) {
    this.readOnly = def.readOnly ?? false;
    this.onPut = def.onPut;
    this.onRpc = def.onRpc;
    this.access = def.access;
    if (def.value === undefined) {
      this.type = undefined;
      this.current = {};
      this.timeStamped = false;
      return;
    }
    const t = typedOf(def.value, def.id ?? 'structure');
    // Plain values are converted to the field types (e.g. number arrays to the column's typed arrays).
    this.type = t.type;
    this.current = t.type.fields.length ? putData(t.type, t.value).value : t.value;
    const ts = t.type.fields.find((f) => f.name === 'timeStamp')?.type;
    this.timeStamped = ts?.kind === 'structure' && ts.fields.some((f) => f.name === 'secondsPastEpoch');
    // Stamped now unless the app gave a time.
    if (this.timeStamped && !(this.current.timeStamp as PvStructure).secondsPastEpoch)
      this.current.timeStamp = stamp(this.current, timeOf());
  }

  /** The structure now (a new object after each post: read it, do not change it). */
  get value(): PvStructure {
    return this.current;
  }

  /**
   * Publish the fields given (by path; a plain value is the `value` field), the others kept: their
   * monitors get the fields that changed. A structure with a timeStamp is stamped with the server's
   * clock (or `timestamp`, ms since the POSIX epoch) unless the fields set it.
   */
  post(fields: StructureFields | number | string | ArrayLike<unknown>, opts: { timestamp?: Date | number } = {}): void {
    if (!this.type) throw new TypeError(`${this.name} serves RPC only: it has no value to post`);
    const { value, paths } = putData(this.type, fields as never, undefined, this.current);
    if (this.timeStamped && !paths.some((p) => p === 'timeStamp' || p.startsWith('timeStamp.'))) {
      value.timeStamp = stamp(value, timeOf(opts.timestamp));
      paths.push('timeStamp');
    }
    this.current = value;
    for (const l of this.listenerSet) l(this, CHANGE_VALUE, paths);
  }

  /** A client's access now (as a PV's). */
  accessFor(peer: Caller): Access {
    return accessFor(this.access, this.readOnly, peer);
  }

  /** No longer served: its channels are disconnected. */
  retire(): void {
    for (const l of [...this.listenerSet]) l(this, CHANGE_GONE, []);
    this.listenerSet.clear();
  }

  subscribe(l: StructureListener): () => void {
    this.listenerSet.add(l);
    return () => this.listenerSet.delete(l);
  }
}

function stamp(v: PvStructure, ms: number): PvStructure {
  const old = v.timeStamp as PvStructure | undefined;
  return { ...old, secondsPastEpoch: BigInt(Math.floor(ms / 1000)), nanoseconds: Math.round((ms % 1000) * 1e6) };
}
