// Gap detection for the built-in IOC's test PVs: counters that step by exactly 1 per update,
// and arrays whose every element equals the update number. One detector per PV.

/** One gap: what docs/capture-format.md stores as a row of a PV's `gaps` dataset. */
export interface GapRecord {
  /** Row (in the PV's datasets) of the first update after the gap. */
  index: number;
  /** The value before the gap (row index - 1), and the value at row index. */
  before: number;
  after: number;
  /** Updates lost: after - before - 1. Zero or negative: the value went back (IOC restart) or repeated. */
  lost: number;
}

export class GapDetector {
  private last: number | undefined;
  /** Updates lost over all gaps (gaps with lost > 0). */
  lost = 0;
  /** Gap records produced, including backward steps. */
  gaps = 0;
  /** Array elements that disagree with their update's first element (corruption, not a gap). */
  mismatched = 0;

  /**
   * @param previous the value before the first update, when the caller knows it (for example,
   *   the value read just before monitoring started): a gap before the first update is then found too.
   */
  constructor(previous?: number) {
    this.last = previous;
  }

  /** Look at the update stored at row `index`; returns a gap record when it did not step by exactly 1. */
  observe(index: number, value: number | ArrayLike<number>): GapRecord | undefined {
    let v: number;
    if (typeof value === 'number') {
      v = value;
    } else {
      if (value.length === 0) return undefined;
      v = value[0]!;
      if (!allSame(value)) for (let i = 1; i < value.length; i++) if (value[i] !== v) this.mismatched++;
    }
    const before = this.last;
    this.last = v;
    if (before === undefined || v === before + 1) return undefined;
    const lost = v - before - 1;
    this.gaps++;
    if (lost > 0) this.lost += lost;
    return { index, before, after: v, lost };
  }
}

/**
 * Whether every element of a typed array has the bytes of its first: the array compared with
 * itself one element on (one memcmp, where a loop over a million elements takes milliseconds).
 * Plain arrays, and NaN elements, answer false and are left to the element loop.
 */
function allSame(value: ArrayLike<number>): boolean {
  if (!ArrayBuffer.isView(value) || value instanceof DataView) return false;
  const t = value as unknown as Float64Array;
  const bytes = Buffer.from(t.buffer, t.byteOffset, t.byteLength);
  const step = t.BYTES_PER_ELEMENT;
  if (Number.isNaN(t[0])) return false;
  return bytes.subarray(step).equals(bytes.subarray(0, bytes.length - step));
}
