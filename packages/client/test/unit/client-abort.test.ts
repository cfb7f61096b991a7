// One AbortSignal passed to many calls: one listener on it, whatever the number of calls, so
// Node never warns of a listener leak; every call is aborted once; the listener goes with the
// last call.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onAbort } from '../../src/client/abort.js';
import { AbortedError, Context } from '../../src/index.js';

let warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => void process.off('warning', onWarning));

describe('onAbort', () => {
  it('1,000 watchers share one listener, each called once; unwatched ones are not; the last unwatch removes it', () => {
    const ac = new AbortController();
    const calls = new Array<number>(1000).fill(0);
    const unwatch = calls.map((_, i) => onAbort(ac.signal, () => calls[i]!++));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    unwatch[7]!();
    ac.abort();
    ac.abort();
    expect(calls.filter((c) => c === 1)).toHaveLength(999);
    expect(calls[7]).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);

    const other = new AbortController();
    const stops = [onAbort(other.signal, () => {}), onAbort(other.signal, () => {})];
    stops[0]!();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(1);
    stops[1]!();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });
});

describe('one signal for many calls of a Context', () => {
  it('200 gets and 200 monitors on one signal: no warning, all aborted, no listener left', async () => {
    // Searches to a port where nothing listens: every call waits for its name until the signal aborts it.
    const ctx = new Context({ env: { EPICS_CA_ADDR_LIST: '127.0.0.1:9', EPICS_CA_AUTO_ADDR_LIST: 'NO' } });
    try {
      const ac = new AbortController();
      const gets = Array.from({ length: 200 }, (_, i) =>
        ctx.get(`NOWHERE:${i}`, { timeout: 10_000, signal: ac.signal }).then(
          () => 'answered',
          (e: unknown) => e,
        ),
      );
      const monitors = Array.from({ length: 200 }, (_, i) => ctx.monitor(`NOWHERE:M${i}`, { signal: ac.signal }));
      await new Promise((r) => setTimeout(r, 20));
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
      ac.abort();
      for (const r of await Promise.all(gets)) expect(r).toBeInstanceOf(AbortedError);
      for (const m of monitors) {
        const seen: unknown[] = [];
        try {
          for await (const ev of m) seen.push(ev.kind === 'error' ? ev.error : ev);
        } catch (e) {
          seen.push(e);
        }
        expect(seen).toHaveLength(1);
        expect(seen[0]).toBeInstanceOf(AbortedError);
      }
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      await ctx.close();
    }
  });
});
