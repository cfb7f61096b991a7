// `--capture-steps`: the load steps asked for, counters x Hz and array elements x Hz, in order;
// none asked: the full ramp.
import { describe, expect, it } from 'vitest';
import { CAPTURE_STEPS, captureSteps } from '../../src/bench/capture.js';

describe('captureSteps', () => {
  it('counters x Hz and array:elements x Hz, in the order given', () => {
    expect(captureSteps(['1000x10', 'array:100000x5', '4000x100']).map((s) => [s.kind, s.pvs, s.elements, s.rateHz])).toEqual([
      ['scalar', 1000, 1, 10],
      ['array', 1, 100_000, 5],
      ['scalar', 4000, 1, 100],
    ]);
    const [counters, waveform] = captureSteps(['1000x10', 'array:100000x5']);
    expect(counters!.offeredUpdatesS).toBe(10_000);
    expect(waveform!.offeredUpdatesS).toBe(5);
  });

  it('none asked: the full ramp, counters from 1000 x 10 Hz to 4000 x 100 Hz, then the waveform to 2,000,000 x 40 Hz', () => {
    expect(captureSteps(undefined)).toBe(CAPTURE_STEPS);
    const label = (s: (typeof CAPTURE_STEPS)[number]) => `${s.kind === 'array' ? `array:${s.elements}` : s.pvs}x${s.rateHz}`;
    expect(CAPTURE_STEPS.map(label)).toEqual([
      '1000x10',
      '1000x50',
      '1000x100',
      '2000x100',
      '4000x100',
      'array:100000x10',
      'array:1000000x5',
      'array:1000000x10',
      'array:1000000x20',
      'array:1000000x40',
      'array:2000000x40',
    ]);
  });
});
