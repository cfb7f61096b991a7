// A CA snapshot in progress: many names read concurrently through the one read path, each decoded
// straight into its result, on the batch every protocol shares (../batch-run.ts).
import { performance } from 'node:perf_hooks';
import { type CaValue, type DbrMetadata, Reading } from '../../ca/dbr.js';
import type { Channel } from './channel.js';
import { BatchRun } from '../batch-run.js';
import type { EpicsError } from '../errors.js';
import type { ChannelManager } from './manager.js';
import { checkTimeout } from '../pending.js';
import { ChannelRead, ReadSpec } from './read.js';
import type { AnyReading } from './reading.js';
import type { SnapshotOptions, SnapshotResult } from '../snapshot.js';

type AnyResult = SnapshotResult<AnyReading>;

/** A success: a Reading that also carries the name and the elapsed time (the reply is decoded straight into it). */
class Answer extends Reading {
  readonly ok = true as const;
  constructor(
    readonly name: string,
    readonly elapsedMs: number,
    value: CaValue,
    dbrType: number,
    count: number,
    status: number,
    severity: number,
    secondsPastEpoch: number,
    nanoseconds: number,
    metadata: DbrMetadata | undefined,
  ) {
    super(value, dbrType, count, status, severity, secondsPastEpoch, nanoseconds, metadata);
  }

  get reading(): Reading {
    return this;
  }

  toJSON(): object {
    return {
      name: this.name,
      ok: true,
      value: this.value,
      severity: this.severity,
      status: this.status,
      timestamp: this.timestamp,
      secondsPastEpoch: this.secondsPastEpoch,
      nanoseconds: this.nanoseconds,
      elapsedMs: this.elapsedMs,
    };
  }
}

/** One name of the batch: its read, decoded into the batch's result, with the outcome going to the batch. */
class Item extends ChannelRead {
  constructor(
    private readonly batch: Batch,
    readonly i: number,
    ch: Channel,
    spec: ReadSpec,
  ) {
    super(ch, spec);
  }

  protected get settled(): boolean {
    return this.batch.results[this.i] !== undefined;
  }

  override makeReading(
    value: CaValue,
    dbrType: number,
    count: number,
    status: number,
    severity: number,
    secondsPastEpoch: number,
    nanoseconds: number,
    metadata: DbrMetadata | undefined,
  ): Answer {
    const b = this.batch;
    return new Answer(
      b.names[this.i]!,
      performance.now() - b.t0,
      value,
      dbrType,
      count,
      status,
      severity,
      secondsPastEpoch,
      nanoseconds,
      metadata,
    );
  }

  protected succeeded(r: Reading): void {
    this.batch.answer(this.i, r as unknown as AnyResult);
  }

  protected failed(e: EpicsError): void {
    this.batch.fail(this.i, e);
  }
}

class Batch extends BatchRun<AnyReading, Channel, Item> {
  readonly spec: ReadSpec;

  constructor(mgr: ChannelManager, names: readonly string[], opts: SnapshotOptions) {
    super(mgr, names, opts.signal);
    this.spec = new ReadSpec(opts, mgr.config.maxArrayBytes);
  }

  protected item(i: number, ch: Channel): Item {
    return new Item(this, i, ch, this.spec);
  }
}

/** Read many names at once, each against its own timeout; one result per name, in input order. */
export function runSnapshot(mgr: ChannelManager, names: readonly string[], opts: SnapshotOptions): Promise<AnyResult[]> {
  const timeout = checkTimeout(opts.timeout);
  if (names.length === 0) return Promise.resolve([]);
  const b = new Batch(mgr, names, opts);
  b.start(timeout);
  return b.promise;
}
