// BatchRun, the batch every snapshot runs on: one result per name, the deadline kept even when
// the event loop is too busy for the batch's timer to fire on time, and the channels let go of.
import { describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { BatchRun, type BatchItem, type BatchManager } from '../../src/client/batch-run.js';
import { TimeoutError } from '../../src/client/errors.js';
import type { SnapshotResult } from '../../src/client/snapshot.js';

interface Ch {
  name: string;
  released: boolean;
}
interface Answer {
  readonly value: number;
  readonly ok: true;
  readonly name: string;
  readonly elapsedMs: number;
  readonly reading: Answer;
}

class Item implements BatchItem {
  cancelled = false;
  constructor(readonly ch: Ch & { timeoutError(): TimeoutError }) {}
  start(): void {}
  cancel(): void {
    this.cancelled = true;
  }
}

class Run extends BatchRun<Answer, Ch & { timeoutError(): TimeoutError }, Item> {
  readonly made: Item[] = [];
  protected item(_i: number, ch: Ch & { timeoutError(): TimeoutError }): Item {
    const it = new Item(ch);
    this.made.push(it);
    return it;
  }
  reply(i: number): void {
    const elapsedMs = performance.now() - this.t0;
    const a = { value: i, ok: true as const, name: this.names[i]!, elapsedMs } as Answer;
    (a as { reading: Answer }).reading = a;
    this.answer(i, a as SnapshotResult<Answer>);
  }
}

function manager(): BatchManager<Ch & { timeoutError(): TimeoutError }> & { released: string[] } {
  const released: string[] = [];
  return {
    released,
    acquire: (name) => ({ name, released: false, timeoutError: () => new TimeoutError('no reply within the timeout', name) }),
    release: (ch) => void released.push(ch.name),
  };
}

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('BatchRun', () => {
  it('an answer read past the deadline settles the batch at once, before the late timer fires', async () => {
    const mgr = manager();
    const run = new Run(mgr, ['A', 'B', 'C'], undefined, Infinity);
    run.start(50);
    let settledByTheReply = false;
    // the event loop is busy past the deadline, then handles a reply: the batch's timer has not
    // run yet, and the names still open time out in that same call
    setTimeout(() => {
      busy(80);
      run.reply(1);
      settledByTheReply = Array.from(run.results).every((r) => r !== undefined);
    }, 5);
    const results = await run.promise;
    expect(settledByTheReply).toBe(true);
    expect(results.map((r) => r.ok)).toEqual([false, true, false]);
    expect(results[0]!.ok === false && results[0]!.code).toBe('ERR_EPICS_TIMEOUT');
    // timed out at the reply past the deadline, not at a timer later
    expect(results[1]!.elapsedMs).toBeGreaterThanOrEqual(50);
    expect(results[0]!.elapsedMs - results[1]!.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(results[0]!.elapsedMs - results[1]!.elapsedMs).toBeLessThan(50);
    // the reads are cancelled and the channels let go of once the caller has the results
    expect(mgr.released).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(run.made.every((i) => i.cancelled)).toBe(true);
    expect(mgr.released.sort()).toEqual(['A', 'B', 'C']);
  });

  it('answers within the deadline leave the others to the timer', async () => {
    const mgr = manager();
    const run = new Run(mgr, ['A', 'B'], undefined, Infinity);
    run.start(60);
    setTimeout(() => run.reply(0), 5);
    const results = await run.promise;
    expect(results.map((r) => r.ok)).toEqual([true, false]);
    expect(results[1]!.elapsedMs).toBeGreaterThanOrEqual(59);
  });
});
