// The runner sample record of docs/runners.md, encoded and decoded here only: 32 bytes,
// little-endian: PV index u32, severity i16, status i16, value f64, IOC time f64, receive
// time f64 (POSIX seconds). python/samples.py and c/epicsperf_ca.c write the same record;
// SampleStore is the Node runners' writer.

export const SAMPLE_BYTES = 32;

export interface Sample {
  pv: number;
  severity: number;
  status: number;
  value: number;
  iocTime: number;
  recvTime: number;
}

/** Write one record at byte `offset` of `view`. */
export function encodeSample(
  view: DataView,
  offset: number,
  pv: number,
  severity: number,
  status: number,
  value: number,
  iocTime: number,
  recvTime: number,
): void {
  view.setUint32(offset, pv, true);
  view.setInt16(offset + 4, severity, true);
  view.setInt16(offset + 6, status, true);
  view.setFloat64(offset + 8, value, true);
  view.setFloat64(offset + 16, iocTime, true);
  view.setFloat64(offset + 24, recvTime, true);
}

/** Preallocated store of the first `samples` updates per PV, in the wire layout. */
export class SampleStore {
  readonly buffer: ArrayBuffer;
  private readonly view: DataView;
  private readonly counts: Uint32Array;
  private used = 0;
  private full = 0;

  constructor(
    private readonly pvs: number,
    private readonly samples: number,
  ) {
    this.buffer = new ArrayBuffer(pvs * samples * SAMPLE_BYTES);
    this.view = new DataView(this.buffer);
    this.counts = new Uint32Array(pvs);
  }

  /** Store one update; returns true when every PV has all its samples. */
  add(pv: number, severity: number, status: number, value: number, iocTime: number, recvTime: number): boolean {
    const n = this.counts[pv]!;
    if (n >= this.samples) return this.full === this.pvs;
    this.counts[pv] = n + 1;
    const off = this.used * SAMPLE_BYTES;
    this.used++;
    encodeSample(this.view, off, pv, severity, status, value, iocTime, recvTime);
    if (n + 1 === this.samples) this.full++;
    return this.full === this.pvs;
  }

  get count(): number {
    return this.used;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buffer, 0, this.used * SAMPLE_BYTES);
  }
}

/** Every whole record of a payload (a trailing partial record is ignored). */
export function decodeSamples(buf: Uint8Array): Sample[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = Math.floor(buf.byteLength / SAMPLE_BYTES);
  const out: Sample[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * SAMPLE_BYTES;
    out[i] = {
      pv: view.getUint32(o, true),
      severity: view.getInt16(o + 4, true),
      status: view.getInt16(o + 6, true),
      value: view.getFloat64(o + 8, true),
      iocTime: view.getFloat64(o + 16, true),
      recvTime: view.getFloat64(o + 24, true),
    };
  }
  return out;
}
