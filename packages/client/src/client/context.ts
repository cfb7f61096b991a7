// The public Context: configuration, get/put/monitor/snapshot, info and close() for both
// protocols. A name prefixed `ca://` or `pva://` picks the protocol, others use the context's
// default (CA unless set); the CA and PVA channel managers behind it are private, PVA's made on
// first use. Over CA a read's type follows its DBR form (ReadingOf<F>), over PVA it is a PvaReading.
import type { FormName } from '../ca/constants.js';
import type { FieldDesc } from '../pva/types.js';
import { resolveConfig, type CaConfig } from '../transport/ca/config.js';
import type { ContextOptions } from '../transport/config.js';
import { resolvePvaConfig, type PvaConfig } from '../transport/pva/config.js';
import { runSnapshot } from './ca/snapshot.js';
import { BadArgumentError, ClosedError } from './errors.js';
import { type ChannelInfo, infoOnce } from './ca/info.js';
import type { ManagerStats } from './channel-cache.js';
import { ChannelManager } from './ca/manager.js';
import type { Monitor, MonitorCallback, MonitorOptions } from './monitor.js';
import type { CallOptions, GetOptions, PutOptions, PutValue } from './options.js';
import {
  pvaGet,
  pvaGetField,
  pvaPut,
  pvaRpc,
  type PvaPutOptions,
  type PvaReadOptions,
  type PvaRpcOptions,
  type RpcArgument,
} from './pva/api.js';
import { PvaManager, type PvaManagerStats } from './pva/manager.js';
import { PvaMonitor, type PvaMonitorOptions } from './pva/monitor.js';
import type { PvaPutValue } from '../pva/fields.js';
import type { PvaReading } from './pva/reading.js';
import { runPvaSnapshot, type PvaSnapshotOptions } from './pva/snapshot.js';
import { readOnce } from './ca/read.js';
import type { AnyReading, GetForm, ReadingOf } from './ca/reading.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';
import { ChannelMonitor } from './ca/monitor.js';
import { writeOnce } from './ca/write.js';

export type { GetOptions, PutOptions } from './options.js';

export type Protocol = 'ca' | 'pva';
/**
 * What a read gives over a protocol: a PvaReading over PV Access, the reading of form `F` over
 * CA (TimeReading by default).
 */
export type ProtocolReading<P extends Protocol, F extends GetForm = 'time'> = P extends 'pva' ? PvaReading : ReadingOf<F>;
type PvaName = `pva://${string}`;
type CaName = `ca://${string}`;

/** The protocol and the bare name of `name` under a context whose default is `def`. */
export function splitName(name: string, def: Protocol): [Protocol, string] {
  if (typeof name !== 'string') return [def, name];
  if (name.startsWith('pva://')) return ['pva', name.slice(6)];
  if (name.startsWith('ca://')) return ['ca', name.slice(5)];
  return [def, name];
}

export class Context<P extends Protocol = 'ca'> {
  readonly config: CaConfig;
  readonly pvaConfig: PvaConfig;
  /** Protocol of names without a prefix. */
  readonly protocol: P;
  readonly #ca: ChannelManager;
  #pva: PvaManager | undefined;

  /** `protocol`: the protocol of names without a `ca://` or `pva://` prefix (default 'ca'). */
  constructor(options: ContextOptions & { protocol?: P } = {}) {
    const proto = options.protocol ?? 'ca';
    if (proto !== 'ca' && proto !== 'pva') throw new BadArgumentError(`protocol must be 'ca' or 'pva', got '${String(proto)}'`);
    this.protocol = proto as P;
    this.config = resolveConfig(options);
    this.pvaConfig = resolvePvaConfig(options);
    this.#ca = new ChannelManager(this.config);
  }

  get closed(): boolean {
    return this.#ca.closed;
  }

  #pvaManager(): PvaManager {
    if (this.#ca.closed) throw new ClosedError();
    return (this.#pva ??= new PvaManager(this.pvaConfig));
  }

  /**
   * Read a PV once. Over PV Access: a PvaReading (normative types; `request` selects fields).
   * Over CA the form decides what the reading carries, and its type says so: 'time' (default)
   * value, alarm and timestamp; 'ctrl'/'gr' value, alarm and metadata (no timestamp: CA's CTRL
   * and GR forms carry none); 'full' all of them (TIME and CTRL read together, merged).
   */
  get(name: PvaName, opts?: CallOptions & PvaReadOptions): Promise<PvaReading>;
  get<F extends GetForm = 'time'>(name: CaName, opts?: GetOptions & { form?: F }): Promise<ReadingOf<F>>;
  get<F extends GetForm = 'time'>(name: string, opts?: GetOptions & PvaReadOptions & { form?: F }): Promise<ProtocolReading<P, F>>;
  async get(name: string, opts: GetOptions & PvaReadOptions = {}): Promise<AnyReading | ReadingOf<'full'> | PvaReading> {
    const [proto, bare] = splitName(name, this.protocol);
    if (proto === 'pva') return pvaGet(this.#pvaManager(), bare, opts);
    return readOnce(this.#ca, bare, opts) as Promise<AnyReading | ReadingOf<'full'>>;
  }

  /**
   * What a CA channel is (native type, element count, server, access), as cainfo tells it; waits
   * for the connection. PV Access has no such query (its channels tell no native type nor access
   * rights): use getField() for a PVA channel's type.
   */
  async info(name: string, opts: CallOptions = {}): Promise<ChannelInfo> {
    const [proto, bare] = splitName(name, this.protocol);
    if (proto !== 'ca') throw new BadArgumentError('info is a Channel Access operation: use a ca:// name or a CA context', name);
    return infoOnce(this.#ca, bare, opts);
  }

  /**
   * Write a PV. CA waits for completion (WRITE_NOTIFY) unless `wait: false`; PV Access puts the
   * `value` field (an enum's index, or its choice by name) or, given an object, the fields it names.
   */
  put(name: PvaName, value: PvaPutValue, opts?: PvaPutOptions): Promise<void>;
  put(name: string, value: PutValue | PvaPutValue, opts?: PutOptions & PvaPutOptions): Promise<void>;
  async put(name: string, value: PutValue | PvaPutValue, opts: PutOptions & PvaPutOptions = {}): Promise<void> {
    const [proto, bare] = splitName(name, this.protocol);
    if (proto === 'pva') return pvaPut(this.#pvaManager(), bare, value as PvaPutValue, opts);
    return writeOnce(this.#ca, bare, value as PutValue, opts);
  }

  /**
   * Subscribe to a PV. With a callback, events go to it and the returned handle has close().
   * Without, the returned Monitor is an async iterable with a bounded queue. Its updates are
   * PvaReadings over PV Access, CA readings of the monitor's form ('time' by default) over CA.
   */
  monitor(name: PvaName, opts?: PvaMonitorOptions, callback?: MonitorCallback<PvaReading>): Monitor<PvaReading>;
  monitor<F extends FormName = 'time'>(
    name: CaName,
    opts?: MonitorOptions & { form?: F },
    callback?: MonitorCallback<ReadingOf<F>>,
  ): Monitor<ReadingOf<F>>;
  monitor<F extends FormName = 'time'>(
    name: string,
    opts?: MonitorOptions & PvaMonitorOptions & { form?: F },
    callback?: MonitorCallback<ProtocolReading<P, F>>,
  ): Monitor<ProtocolReading<P, F>>;
  monitor(
    name: string,
    opts?: MonitorOptions & PvaMonitorOptions,
    callback?: MonitorCallback<never>,
  ): Monitor<AnyReading> | Monitor<PvaReading> {
    // A callback passed as the options would make an iterator that nobody reads.
    if (typeof opts === 'function')
      throw new BadArgumentError('the callback is the third argument: monitor(name, options, callback)', name);
    const [proto, bare] = splitName(name, this.protocol);
    if (proto === 'pva') return new PvaMonitor(this.#pvaManager(), bare, opts ?? {}, callback as MonitorCallback<PvaReading> | undefined);
    return new ChannelMonitor(this.#ca, bare, opts ?? {}, callback as MonitorCallback<AnyReading> | undefined);
  }

  /**
   * Read many PVs at once, each against its own timeout; one result per name in input order,
   * never a rejection. Names of both protocols may be mixed: the results are typed by the names'
   * prefix when all share one, else by the context's protocol (tell a mixed snapshot's results
   * apart with `r.reading instanceof PvaReading`). `form` applies to the CA names, `request` to
   * the PVA names.
   */
  snapshot(names: readonly PvaName[], opts?: SnapshotOptions & PvaSnapshotOptions): Promise<SnapshotResult<PvaReading>[]>;
  snapshot<F extends FormName = 'time'>(
    names: readonly CaName[],
    opts?: SnapshotOptions & { form?: F },
  ): Promise<SnapshotResult<ReadingOf<F>>[]>;
  snapshot<F extends FormName = 'time'>(
    names: readonly string[],
    opts?: SnapshotOptions & PvaSnapshotOptions & { form?: F },
  ): Promise<SnapshotResult<ProtocolReading<P, F>>[]>;
  async snapshot(
    names: readonly string[],
    opts: SnapshotOptions & PvaSnapshotOptions = {},
  ): Promise<SnapshotResult<AnyReading | PvaReading>[]> {
    const ca: number[] = [];
    const pva: number[] = [];
    const bare: string[] = new Array(names.length);
    names.forEach((n, i) => {
      const [proto, b] = splitName(n, this.protocol);
      bare[i] = b;
      (proto === 'pva' ? pva : ca).push(i);
    });
    if (pva.length === 0) return runSnapshot(this.#ca, bare, opts);
    if (ca.length === 0) return runPvaSnapshot(this.#pvaManager(), bare, opts);
    const [a, b] = await Promise.all([
      runSnapshot(
        this.#ca,
        ca.map((i) => bare[i]!),
        opts,
      ),
      runPvaSnapshot(
        this.#pvaManager(),
        pva.map((i) => bare[i]!),
        opts,
      ),
    ]);
    const out = new Array<SnapshotResult<AnyReading> | SnapshotResult<PvaReading>>(names.length);
    ca.forEach((i, k) => (out[i] = a[k]!));
    pva.forEach((i, k) => (out[i] = b[k]!));
    return out;
  }

  /** PV Access GET_FIELD: the type description of a channel (or of one of its fields, by dotted path). */
  async getField(name: string, field = '', opts: CallOptions = {}): Promise<FieldDesc> {
    const [proto, bare] = splitName(name, this.protocol);
    if (proto !== 'pva') throw new BadArgumentError('getField is a PV Access operation: use a pva:// name or a PVA context', name);
    return pvaGetField(this.#pvaManager(), bare, field, opts);
  }

  /**
   * PV Access RPC: the server's handler is called with the argument (a plain object, its type
   * inferred: numbers as doubles, bigints as longs, typed arrays as their own type; or a typed
   * structure) and its result comes back as a reading (undefined when it sends none).
   */
  async rpc(name: string, argument?: RpcArgument, opts: PvaRpcOptions = {}): Promise<PvaReading | undefined> {
    const [proto, bare] = splitName(name, this.protocol);
    if (proto !== 'pva') throw new BadArgumentError('rpc is a PV Access operation: use a pva:// name or a PVA context', name);
    return pvaRpc(this.#pvaManager(), bare, argument, opts);
  }

  /** Close every connection and socket of both protocols and fail whatever is pending. */
  async close(): Promise<void> {
    this.#ca.close();
    this.#pva?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Diagnostics: open circuits, channels, names still searching, datagrams sent, per search
   * destination the sends the system took and refused, and per name server (`nameServers`:
   * `server` "host:port", `connected`, `searchesSent`, `answers`; CA SEARCH requests are counted
   * per name, PV Access SEARCH messages per message). CA at the top level, `pva` for PV Access,
   * with its `connections`: each server's "host:port", whether it is TLS, how this client
   * identified itself (`identity` "x509", "ca" or "anonymous"; `as` the common name of its
   * certificate with x509) and the common name of the server's certificate (`peer`).
   */
  stats(): ManagerStats & { pva?: PvaManagerStats } {
    const s = this.#ca.stats();
    return this.#pva ? { ...s, pva: this.#pva.stats() } : s;
  }
}
