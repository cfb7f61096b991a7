// The bench's steps (one client, one workload, one run or one load step): counted, and their
// starts and ends reported for the progress line.

/** One step of a bench run: `index` of `total` (from 1), and at its end a one-line outcome. */
export interface StepEvent {
  phase: 'start' | 'end';
  index: number;
  total: number;
  workload: string;
  client: string;
  run: number;
  repeat: number;
  /** At the end: seconds the step took, and what it found. */
  seconds?: number;
  outcome?: string;
}

/** Counts the steps and reports their starts and ends. */
export class Steps {
  private index = 0;
  constructor(
    private total: number,
    private readonly onStep: ((e: StepEvent) => void) | undefined,
  ) {}

  /** `n` counted steps will not run after all. */
  skip(n: number): void {
    this.total = Math.max(this.index, this.total - n);
  }

  async run<T>(
    workload: string,
    client: string,
    run: number,
    repeat: number,
    body: () => Promise<T>,
    outcome: (r: T) => string,
  ): Promise<T> {
    const base = { index: ++this.index, total: this.total, workload, client, run, repeat };
    this.onStep?.({ phase: 'start', ...base });
    const t0 = performance.now();
    const r = await body();
    this.onStep?.({ phase: 'end', ...base, seconds: (performance.now() - t0) / 1000, outcome: outcome(r) });
    return r;
  }

  /** The ramps' step runner: one step of `workload` at load step `label`, run once. */
  ramp<T>(workload: string, outcome: (r: T) => string) {
    return (label: string, client: string, body: () => Promise<T>) => this.run(`${workload} ${label}`, client, 1, 1, body, outcome);
  }
}
