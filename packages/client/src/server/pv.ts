// A process variable a server publishes: its type and element count, its value with alarm and
// timestamp, display and control metadata, whether puts are allowed and who handles them. The
// protocol circuits read it and subscribe to its posts; nothing here does I/O.
import { DbrType, type NativeType } from '../ca/constants.js';
import type { DbrMetadata } from '../ca/dbr.js';
import type { ScalarType } from '../pva/types.js';

/** A PV's value: a number or string, or an array (a BigInt64Array for 64-bit integers over PV Access). */
export type ServedValue = number | string | readonly number[] | readonly string[] | ArrayLike<number> | BigInt64Array;

/** An alarm: severity (0 none, 1 minor, 2 major, 3 invalid) and status (EPICS alarm conditions, as CA's). */
export interface Alarm {
  severity: number;
  status: number;
}

/** What a post or a put changed, as CA's DBE mask bits (value, archive, alarm, property). */
export const CHANGE_VALUE = 1;
export const CHANGE_ARCHIVE = 2;
export const CHANGE_ALARM = 4;
export const CHANGE_PROPERTY = 8;
/** Not a DBE bit: the PV's access changed (read-only set or cleared). */
export const CHANGE_ACCESS = 0x100;
/** Not a DBE bit: the PV is no longer served. */
export const CHANGE_GONE = 0x200;

export interface PvState {
  value: ServedValue;
  severity: number;
  status: number;
  /** Seconds and nanoseconds past the POSIX epoch. */
  secondsPastEpoch: number;
  nanoseconds: number;
}

export interface PvDefinition {
  /** CA native type: the element type of the value. */
  type: NativeType;
  /** The largest element count (1 for scalars). */
  maxCount?: number;
  value: ServedValue;
  metadata?: DbrMetadata;
  /** Puts refused (CA: no write access). */
  readOnly?: boolean;
  /** Each client's access, by who it is (default: write, or read for a read-only PV). */
  access?: AccessRule;
  /** The record type clients are told the PV is (CA's DBR_CLASS_NAME; default by type: ao, longout, mbbo, stringout, waveform). */
  className?: string;
  /** Monitor deadband (a record's MDEL): value subscribers get a scalar change larger than this; -1: every post. */
  valueDeadband?: number;
  /** Archive deadband (ADEL): the same for archive (DBE_LOG) subscribers. */
  archiveDeadband?: number;
  /** The element type over PV Access, where it is not CA's (64-bit integers: 'long', served as doubles over CA; signed bytes: 'byte'). */
  pvaElement?: ScalarType;
  /** The alarm of a value posted (or put) without one, as a record's alarm limits give it; none: no alarm. */
  alarm?: (value: ServedValue) => Alarm | undefined;
}

export interface PostOptions {
  severity?: number;
  status?: number;
  /** The value's time, ms since the POSIX epoch (a Date or a number); the server's clock by default. */
  timestamp?: Date | number;
}

/**
 * Who sent a put or an RPC call: the client's host and user as it says them (with PV Access's
 * "x509", the common name of its certificate, which TLS checked), and its address.
 */
export interface Caller {
  host: string;
  user: string;
  address: string;
  /** PV Access: how the client identified itself ("ca", "x509" or "anonymous"). */
  method?: string;
  /** PV Access: the connection is TLS. */
  tls?: boolean;
}

/** What a client may do with a PV: read and write it, read it only, or neither. */
export type Access = 'write' | 'read' | 'none';

/**
 * An app's access rule: a client's access to a PV from who it is (over CA the host and user it
 * names; over PV Access also how it identified itself, and with "x509" its certificate's name).
 * Asked when a channel opens, when a CA client names itself again, and after `refreshAccess()`.
 */
export type AccessRule = (peer: Caller) => Access;

/** The access of `peer` by `rule` (write by default), a read-only PV's at most read. */
export function accessFor(rule: AccessRule | undefined, readOnly: boolean, peer: Caller): Access {
  const a = rule?.(peer) ?? 'write';
  return readOnly && a === 'write' ? 'read' : a;
}

/** A put as the app sees it: the value (in the PV's type) and who sent it. */
export interface PutRequest {
  value: ServedValue;
  peer: Caller;
}

/** The app's answer to a put: accept the value as it is, post another one, or refuse with a message. */
export type PutOutcome = { accept: true; value?: ServedValue } | { accept: false; message: string };
export type PutHandler = (put: PutRequest) => PutOutcome | Promise<PutOutcome> | void | Promise<void>;

export type PvListener = (pv: ServedPv, changes: number) => void;

export class ServedPv {
  readonly type: NativeType;
  readonly maxCount: number;
  private writable: boolean;
  readonly className: string;
  readonly pvaElement: ScalarType | undefined;
  private readonly alarmOf: PvDefinition['alarm'];
  valueDeadband: number;
  archiveDeadband: number;
  /** The values last sent to value and to archive subscribers (deadbands are measured from them). */
  private lastValue: number | undefined;
  private lastArchived: number | undefined;
  private meta: DbrMetadata;
  private current: PvState;
  private readonly listenerSet = new Set<PvListener>();
  onPut: PutHandler | undefined;
  /** The app's access rule (see refreshAccess). */
  access: AccessRule | undefined;

  constructor(
    readonly name: string,
    def: PvDefinition,
  ) {
    this.type = def.type;
    this.maxCount = Math.max(1, Math.floor(def.maxCount ?? countOf(def.value)));
    this.writable = !(def.readOnly ?? false);
    this.className = def.className ?? defaultClass(def.type, this.maxCount);
    this.valueDeadband = def.valueDeadband ?? 0;
    this.archiveDeadband = def.archiveDeadband ?? 0;
    this.pvaElement = def.pvaElement;
    this.alarmOf = def.alarm;
    this.access = def.access;
    if (typeof def.value === 'number') this.lastValue = this.lastArchived = def.value;
    // Alarm limits not given are NaN for floating-point values (as a record's are), else 0.
    const unset = def.type === DbrType.DOUBLE || def.type === DbrType.FLOAT ? NaN : 0;
    this.meta = {
      upperAlarmLimit: unset,
      upperWarningLimit: unset,
      lowerWarningLimit: unset,
      lowerAlarmLimit: unset,
      ...(def.metadata ?? {}),
    };
    const now = clock();
    const alarm = def.alarm?.(def.value);
    this.current = {
      value: def.value,
      severity: alarm?.severity ?? 0,
      status: alarm?.status ?? 0,
      secondsPastEpoch: Math.floor(now / 1000),
      nanoseconds: (now % 1000) * 1e6,
    };
  }

  get readOnly(): boolean {
    return !this.writable;
  }

  /** Allow or refuse puts from now on: clients see their access rights change. */
  set readOnly(on: boolean) {
    if (on === !this.writable) return;
    this.writable = !on;
    for (const l of this.listenerSet) l(this, CHANGE_ACCESS);
  }

  /** A client's access now: the rule's, at most read while the PV is read-only. */
  accessFor(peer: Caller): Access {
    return accessFor(this.access, !this.writable, peer);
  }

  /** Ask the access rule again for every client (its answers changed): CA clients see their rights change. */
  refreshAccess(): void {
    for (const l of this.listenerSet) l(this, CHANGE_ACCESS);
  }

  /** The PV is no longer served: its channels are disconnected. */
  retire(): void {
    for (const l of [...this.listenerSet]) l(this, CHANGE_GONE);
    this.listenerSet.clear();
  }

  /** The metadata (units, limits, enum choices), a new object at each setMetadata (the only way to change it). */
  get metadata(): Readonly<DbrMetadata> {
    return this.meta;
  }

  get state(): Readonly<PvState> {
    return this.current;
  }

  /** Elements the value holds now. */
  get count(): number {
    return countOf(this.current.value);
  }

  /**
   * Publish a new value (and alarm, and time): every subscriber whose mask takes the change gets
   * it. A typed array is sent from its own memory, not copied: post a new array for a new value
   * rather than changing one already posted.
   */
  post(value: ServedValue, opts: PostOptions = {}): void {
    const n = countOf(value);
    if (n > this.maxCount) throw new RangeError(`${this.name}: ${n} elements exceed its ${this.maxCount}`);
    const t = timeOf(opts.timestamp);
    const rule = opts.severity === undefined && this.alarmOf ? this.alarmOf(value) : undefined;
    const severity = opts.severity ?? rule?.severity ?? 0;
    const status = opts.status ?? rule?.status ?? 0;
    let changes = 0;
    if (typeof value === 'number') {
      // A scalar as a record's monitor() posts it: past the deadband from the last value sent (0: any change; -1: every post).
      const past = (last: number | undefined, band: number) =>
        last === undefined || band < 0 || Math.abs(value - last) > band || Number.isNaN(value) !== Number.isNaN(last);
      if (past(this.lastValue, this.valueDeadband)) {
        changes |= CHANGE_VALUE;
        this.lastValue = value;
      }
      if (past(this.lastArchived, this.archiveDeadband)) {
        changes |= CHANGE_ARCHIVE;
        this.lastArchived = value;
      }
    } else changes = CHANGE_VALUE | CHANGE_ARCHIVE;
    if (severity !== this.current.severity || status !== this.current.status) changes |= CHANGE_ALARM;
    this.current = { value, severity, status, secondsPastEpoch: Math.floor(t / 1000), nanoseconds: Math.round((t % 1000) * 1e6) };
    if (changes) for (const l of this.listenerSet) l(this, changes);
  }

  /** Change the metadata (units, limits, enum choices): subscribers of property changes get it. */
  setMetadata(m: DbrMetadata): void {
    this.meta = { ...this.meta, ...m };
    for (const l of this.listenerSet) l(this, CHANGE_PROPERTY);
  }

  /** Channels and subscriptions listening to this PV now (for tests of what a server holds). */
  get listeners(): number {
    return this.listenerSet.size;
  }

  subscribe(l: PvListener): () => void {
    this.listenerSet.add(l);
    return () => this.listenerSet.delete(l);
  }
}

/** The server's clock, ms since the POSIX epoch to the microsecond (Date.now() has whole milliseconds). */
const clock = (): number => performance.timeOrigin + performance.now();

/** A post's time in ms since the POSIX epoch: the one given (a Date or ms), else the server's clock. */
export const timeOf = (t?: Date | number): number => (t === undefined ? clock() : typeof t === 'number' ? t : t.getTime());

function countOf(v: ServedValue): number {
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 1;
  return v.length;
}

/** The CA native type of a JS value a PV is declared with, when the app names none. */
export function nativeTypeOf(v: ServedValue): NativeType {
  if (typeof v === 'string') return DbrType.STRING;
  if (typeof v === 'number') return DbrType.DOUBLE;
  if (v instanceof Int32Array) return DbrType.LONG;
  if (v instanceof Int16Array) return DbrType.SHORT;
  if (v instanceof Float32Array) return DbrType.FLOAT;
  if (v instanceof Uint8Array || v instanceof Int8Array) return DbrType.CHAR;
  if (Array.isArray(v) && typeof v[0] === 'string') return DbrType.STRING;
  return DbrType.DOUBLE;
}

/** The record type a soft IOC would serve such a PV from. */
function defaultClass(type: NativeType, maxCount: number): string {
  if (maxCount > 1) return 'waveform';
  if (type === DbrType.STRING) return 'stringout';
  if (type === DbrType.ENUM) return 'mbbo';
  if (type === DbrType.DOUBLE || type === DbrType.FLOAT) return 'ao';
  return 'longout';
}
