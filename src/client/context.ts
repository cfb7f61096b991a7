// The public Context: configuration, get/put/monitor/snapshot and close(). The channels, name
// resolution and circuits behind it belong to its ChannelManager, held in a private field.
import type { FormName } from '../ca/constants.js';
import { resolveConfig, type CaConfig, type ContextOptions } from '../transport/config.js';
import { runSnapshot } from './batch.js';
import { ChannelManager } from './manager.js';
import type { Monitor, MonitorCallback, MonitorOptions } from './monitor.js';
import { type ChannelInfo, infoOnce } from './info.js';
import type { CallOptions, GetOptions, PutOptions, PutValue } from './options.js';
import { readOnce } from './read.js';
import type { GetForm, ReadingOf } from './reading.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';
import { ChannelMonitor } from './subscription.js';
import { writeOnce } from './write.js';

export type { GetOptions, PutOptions } from './options.js';

export class Context {
  readonly config: CaConfig;
  readonly #manager: ChannelManager;

  constructor(options: ContextOptions = {}) {
    this.config = resolveConfig(options);
    this.#manager = new ChannelManager(this.config);
  }

  get closed(): boolean {
    return this.#manager.closed;
  }

  /**
   * Read a PV once. The form decides what the reading carries, and its type says so: 'time'
   * (default) value, alarm and timestamp; 'ctrl'/'gr' value, alarm and metadata (no timestamp:
   * CA's CTRL and GR forms carry none); 'full' all of them (TIME and CTRL read together, merged).
   */
  async get<F extends GetForm = 'time'>(name: string, opts?: GetOptions & { form?: F }): Promise<ReadingOf<F>> {
    return readOnce(this.#manager, name, opts ?? {}) as Promise<ReadingOf<F>>;
  }

  /** What a channel is (native type, element count, server, access), as cainfo tells it; waits for the connection. */
  async info(name: string, opts: CallOptions = {}): Promise<ChannelInfo> {
    return infoOnce(this.#manager, name, opts);
  }

  /** Write a PV. By default waits for completion (WRITE_NOTIFY); `wait: false` sends a WRITE. */
  async put(name: string, value: PutValue, opts: PutOptions = {}): Promise<void> {
    return writeOnce(this.#manager, name, value, opts);
  }

  /**
   * Subscribe to a PV. With a callback, events go to it and the returned handle has close().
   * Without, the returned Monitor is an async iterable with a bounded queue.
   */
  monitor<F extends FormName = 'time'>(name: string, opts?: MonitorOptions & { form?: F }, callback?: MonitorCallback<F>): Monitor<F> {
    return new ChannelMonitor(this.#manager, name, opts ?? {}, callback as MonitorCallback<FormName> | undefined) as unknown as Monitor<F>;
  }

  /** Read many PVs at once, each against its own timeout; one result per name, never a rejection. */
  snapshot<F extends FormName = 'time'>(names: readonly string[], opts?: SnapshotOptions & { form?: F }): Promise<SnapshotResult<F>[]> {
    return runSnapshot(this.#manager, names, opts ?? {}) as Promise<SnapshotResult<F>[]>;
  }

  /** Close every circuit and socket and fail whatever is pending; the process can then exit. */
  async close(): Promise<void> {
    this.#manager.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Diagnostics: number of open circuits, channels, and names still searching. */
  stats(): { circuits: number; channels: number; searching: number; datagramsSent: number } {
    return this.#manager.stats();
  }
}
