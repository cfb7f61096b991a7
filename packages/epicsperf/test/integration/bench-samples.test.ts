// The runner sample record: what the Node writer and Python's packer (epicsperf_runners.samples) write,
// the orchestrator's decoder reads back exactly.
import { describe, expect, it } from 'vitest';
import { decodeSamples, SAMPLE_BYTES, SampleStore, type Sample } from '../../src/bench/samples.js';
import { pythonModule } from '../../src/pyenv/index.js';
import { pythonJson } from 'epicsperf-testkit/python';

const T0 = 1_700_000_000.123456;

describe('runner sample records', () => {
  it('round-trip through the Node writer, and a PV stops storing once it has its samples', () => {
    const store = new SampleStore(2, 2);
    expect(store.add(0, 1, 4, 7, T0, T0 + 0.5)).toBe(false);
    expect(store.add(1, 2, 3, -1.5, T0 + 1, T0 + 1.25)).toBe(false);
    expect(store.add(0, 1, 4, 8, T0 + 2, T0 + 2.5)).toBe(false);
    expect(store.add(0, 1, 4, 9, T0 + 3, T0 + 3.5)).toBe(false); // beyond this PV's samples: dropped
    expect(store.add(1, -1, 21, Number.NaN, T0 + 4, T0 + 4.25)).toBe(true);
    const bytes = store.bytes();
    expect(bytes.byteLength).toBe(4 * SAMPLE_BYTES);
    expect(decodeSamples(bytes)).toEqual([
      { pv: 0, severity: 1, status: 4, value: 7, iocTime: T0, recvTime: T0 + 0.5 },
      { pv: 1, severity: 2, status: 3, value: -1.5, iocTime: T0 + 1, recvTime: T0 + 1.25 },
      { pv: 0, severity: 1, status: 4, value: 8, iocTime: T0 + 2, recvTime: T0 + 2.5 },
      { pv: 1, severity: -1, status: 21, value: Number.NaN, iocTime: T0 + 4, recvTime: T0 + 4.25 },
    ]);
    expect(decodeSamples(bytes.subarray(0, SAMPLE_BYTES + 5))).toHaveLength(1);
  });

  for (const packer of ['numpy', 'struct']) {
    it(`decode what Python packs (${packer})`, async () => {
      // Three PVs with room for 3 samples each; PV 1 filled none, PV 2 two.
      const script = `
import sys, json
from epicsperf_runners import samples
counts = [3, 0, 2]
sev = [1, 1, 1, 0, 0, 0, -1, 2, 0]
st = [4, 4, 4, 0, 0, 0, 21, 3, 0]
val = [10.0, 11.0, 12.0, 0, 0, 0, -2.5, 1e300, 0]
ts = [${T0} + k for k in range(9)]
rx = [t + 0.001 for t in ts]
pack = samples.pack if sys.argv[1] == 'numpy' else samples._pack_struct
print(json.dumps(pack(counts, 3, sev, st, val, ts, rx).hex()))`;
      const hex = await pythonJson<string>(script, [packer], pythonModule('samples').env);
      const got = decodeSamples(Buffer.from(hex, 'hex'));
      const want: Sample[] = [0, 1, 2, 6, 7].map((k) => ({
        pv: k < 3 ? 0 : 2,
        severity: [1, 1, 1, 0, 0, 0, -1, 2][k]!,
        status: [4, 4, 4, 0, 0, 0, 21, 3][k]!,
        value: [10, 11, 12, 0, 0, 0, -2.5, 1e300][k]!,
        iocTime: T0 + k,
        recvTime: T0 + k + 0.001,
      }));
      expect(got).toHaveLength(5);
      got.forEach((s, i) => {
        const w = want[i]!;
        expect({ ...s, iocTime: 0, recvTime: 0 }).toEqual({ ...w, iocTime: 0, recvTime: 0 });
        expect(s.iocTime).toBeCloseTo(w.iocTime, 6);
        expect(s.recvTime).toBeCloseTo(w.recvTime, 6);
      });
    });
  }
});
