// A client's deadline on one workload run: past it the runner is killed, and the run says when it
// was stopped and in which phase, keeping whatever it had measured by then.
import type { Runner } from './process.js';

export class ClientDeadline {
  private readonly t0 = performance.now();
  private readonly timer: NodeJS.Timeout | undefined;
  private phase = 'starting';
  /** Seconds from the start of the run when it was stopped (undefined: not stopped). */
  stoppedAfterS: number | undefined;

  constructor(runner: Runner, ms: number | undefined) {
    if (ms !== undefined) {
      this.timer = setTimeout(() => {
        this.stoppedAfterS = Math.round((performance.now() - this.t0) / 100) / 10;
        void runner.kill();
      }, ms);
    }
  }

  /** Wraps a progress callback so the deadline knows the phase the run is in. */
  track(progress: (text: string) => void): (text: string) => void {
    return (text) => {
      this.phase = text;
      progress(text);
    };
  }

  /** The run's note when it was stopped. */
  note(): string {
    return `stopped after ${Math.round(this.stoppedAfterS ?? 0)} s (its deadline) while ${this.phase}`;
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
