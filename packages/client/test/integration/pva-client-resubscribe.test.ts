// Monitoring a busy PV Access array again on the same Context: the built-in IOC refreshes a
// 1,000,000-element waveform as fast as it can, so the server still has a cancelled monitor's
// updates queued when the next monitor's INIT arrives; every new monitor must get updates and
// no error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import type { Context, MonitorEvent, PvaReading } from '../../src/index.js';
import { pvaContextFor } from '../helpers/pva-helpers.js';

let ioc: Ioc;
let ctx: Context<'pva'>;

beforeAll(async () => {
  ioc = await startIoc({ records: 1, rate: 0, arrayElements: 1_000_000, arrayRate: 'max' });
  ctx = pvaContextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

/** Monitor the array until `updates` updates came, an error came, or `limitMs` passed; then close it. */
function monitorOnce(updates: number, limitMs: number): Promise<{ updates: number; errors: string[] }> {
  return new Promise((resolve) => {
    const got = { updates: 0, errors: [] as string[] };
    const end = (): void => {
      clearTimeout(timer);
      m.close();
      resolve(got);
    };
    const timer = setTimeout(end, limitMs);
    const m = ctx.monitor('TEST:ARRAY', { timeout: limitMs }, (ev: MonitorEvent<PvaReading>) => {
      if (ev.kind === 'error') {
        got.errors.push(ev.error.message);
        end();
      } else if (ev.kind === 'update' && ++got.updates === updates) end();
    });
  });
}

describe('monitoring a busy array again', () => {
  it('monitor, close, monitor again, four times in a row: every monitor gets updates and no error', async () => {
    const rounds = [];
    for (let i = 0; i < 4; i++) rounds.push(await monitorOnce(5, 15_000));
    expect(rounds).toEqual(rounds.map(() => ({ updates: 5, errors: [] })));
  }, 90_000);
});
