// Snapshot: read many names concurrently, each against its own timeout, with one timer for the
// batch; one result per name in input order (value, alarm, timestamp, elapsed, or why it failed).
import type { Reading } from '../ca/dbr.js';
import type { Channel } from './channel.js';
import type { Context } from './context.js';
import { planRead, type ReadOptions } from './convert.js';
import { AbortedError, AccessDeniedError, CaError, ProtocolError } from './errors.js';
import { checkTimeout } from './pending.js';
import { decodeDbr } from '../ca/dbr.js';

export interface SnapshotOptions extends ReadOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  /** Abort: every name still pending fails with an aborted error. */
  signal?: AbortSignal;
}

export interface SnapshotSuccess {
  readonly name: string;
  readonly ok: true;
  readonly value: Reading['value'];
  readonly severity: number;
  readonly status: number;
  /** The PV's timestamp (TIME form; the EPICS epoch when the form has none). */
  readonly timestamp: Date;
  readonly secondsPastEpoch: number;
  readonly nanoseconds: number;
  /** Milliseconds from the start of the snapshot to this answer. */
  readonly elapsedMs: number;
  readonly reading: Reading;
}

export interface SnapshotFailure {
  name: string;
  ok: false;
  error: CaError;
  code: CaError['code'];
  elapsedMs: number;
}

export type SnapshotResult = SnapshotSuccess | SnapshotFailure;

/** A success; the Date is made only when `timestamp` is read. */
class Answer implements SnapshotSuccess {
  readonly ok = true as const;
  constructor(readonly name: string, readonly reading: Reading, readonly elapsedMs: number) {}
  get value(): Reading['value'] { return this.reading.value; }
  get severity(): number { return this.reading.severity; }
  get status(): number { return this.reading.status; }
  get secondsPastEpoch(): number { return this.reading.secondsPastEpoch; }
  get nanoseconds(): number { return this.reading.nanoseconds; }
  get timestamp(): Date { return this.reading.timestamp; }
  toJSON(): object {
    return {
      name: this.name, ok: true, value: this.value, severity: this.severity, status: this.status,
      timestamp: this.timestamp, secondsPastEpoch: this.secondsPastEpoch, nanoseconds: this.nanoseconds, elapsedMs: this.elapsedMs,
    };
  }
}

export function runSnapshot(ctx: Context, names: readonly string[], opts: SnapshotOptions): Promise<SnapshotResult[]> {
  const timeout = checkTimeout(opts.timeout);
  const t0 = performance.now();
  const n = names.length;
  const results: Array<SnapshotResult | undefined> = new Array(n);
  const chans: Array<Channel | undefined> = new Array(n);
  const cancels: Array<(() => void) | undefined> = new Array(n);
  const ioids = new Array<number>(n).fill(0);
  let remaining = n;
  if (n === 0) return Promise.resolve([]);

  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const done = (): void => {
      if (timer) clearTimeout(timer);
      if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
      for (let i = 0; i < n; i++) {
        const ch = chans[i];
        if (!ch) continue;
        cancels[i]?.();
        if (ioids[i]) ch.transport?.circuit.abandon(ioids[i]!);
        if (!ctx.closed) ctx.release(ch);
      }
      resolve(results as SnapshotResult[]);
    };
    const fail = (i: number, error: CaError): void => {
      if (results[i]) return;
      results[i] = { name: names[i]!, ok: false, error, code: error.code, elapsedMs: performance.now() - t0 };
      if (--remaining === 0) done();
    };
    const succeed = (i: number, r: Reading): void => {
      if (results[i]) return;
      results[i] = new Answer(names[i]!, r, performance.now() - t0);
      if (--remaining === 0) done();
    };
    const read = (i: number, ch: Channel): void => {
      if (results[i]) return;
      if (!ch.canRead) return fail(i, new AccessDeniedError('no read access', ch.name));
      const t = ch.transport!;
      let plan;
      try {
        plan = planRead(ch, opts, ctx.maxArrayBytes, t.circuit.serverVersion);
      } catch (e) {
        return fail(i, e as CaError);
      }
      ioids[i] = t.circuit.read(ch.sid, plan.dbrType, plan.count, {
        onReply: (h, payload, owned) => {
          ioids[i] = 0;
          const r = decodeDbr(h.dataType, h.dataCount, payload, { asArray: plan.asArray, longString: plan.longString, owned });
          if (r) succeed(i, r);
          else fail(i, new ProtocolError('undecodable reply', ch.name));
        },
        onFail: (reason) => {
          ioids[i] = 0;
          fail(i, ctx.failError(reason, ch.name));
        },
      });
    };
    for (let i = 0; i < n && remaining > 0; i++) {
      const name = names[i]!;
      let ch: Channel;
      try {
        ch = ctx.acquire(name);
      } catch (e) {
        fail(i, e instanceof CaError ? e : new ProtocolError(String(e), name));
        continue;
      }
      chans[i] = ch;
      cancels[i] = ch.whenConnected(() => read(i, ch));
    }
    if (remaining === 0) return;
    // One timer for the batch, counted from the start (setting up 10,000 names takes time too).
    timer = setTimeout(() => {
      for (let i = 0; i < n && remaining > 0; i++) if (!results[i]) fail(i, ctx.timeoutError(chans[i]!));
    }, Math.max(0, timeout - (performance.now() - t0)));
    if (opts.signal) {
      onAbort = () => {
        for (let i = 0; i < n && remaining > 0; i++) if (!results[i]) fail(i, new AbortedError(undefined, names[i]));
      };
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}
