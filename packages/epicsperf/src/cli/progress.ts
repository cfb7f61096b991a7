// Progress of a bench run on stderr: on a terminal a live line (cli-progress) with the step, the
// client, the workload, the run, its phase and elapsed time, and an ETA; elsewhere (CI, a log
// file) one plain line per finished step, and an indented `still ...` line when a step has said
// nothing for 8 s.
import { SingleBar } from 'cli-progress';
import { type Watch, watch } from '../progress.js';
import type { StepEvent } from '../workloads/steps.js';

const clock = (s: number) => (s < 60 ? `${Math.round(s)} s` : `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`);

export class BenchProgress {
  private readonly live: boolean;
  private bar: SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly t0 = performance.now();
  private stepStart = performance.now();
  private current: StepEvent | undefined;
  private finished = 0;
  /** Seconds from the start to the end of the last finished step. */
  private finishedS = 0;
  private phase = '';
  /** Off a terminal, the heartbeat of the step under way. */
  private quiet: Watch | undefined;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly heartbeatMs = 8000,
  ) {
    this.live = stream.isTTY === true;
  }

  /** The phase of the step under way (from the runner: starting, reading, collecting ...). */
  phaseUpdate(text: string): void {
    this.phase = text;
    this.redraw();
  }

  step(e: StepEvent): void {
    if (e.phase === 'start') {
      this.current = e;
      this.phase = 'starting';
      this.stepStart = performance.now();
      if (this.live && !this.bar) this.startBar(e.total);
      // the total can shrink while the run goes (capture: a client that lost updates climbs no further)
      else if (this.bar && this.bar.getTotal() !== e.total) this.bar.setTotal(e.total);
      if (!this.live) {
        this.quiet?.stop();
        const what = `running [${e.index}/${e.total}] ${e.workload} · ${e.client} · run ${e.run}/${e.repeat}`;
        this.quiet = watch(what, { heartbeatMs: this.heartbeatMs, progress: (line) => this.stream.write(`  ${line}\n`) });
      }
      this.redraw();
      return;
    }
    this.quiet?.stop();
    this.quiet = undefined;
    this.finished = e.index;
    this.finishedS = (performance.now() - this.t0) / 1000;
    this.bar?.increment(1, this.payload());
    if (!this.live) {
      const total = (performance.now() - this.t0) / 1000;
      this.stream.write(
        `[${e.index}/${e.total}] ${e.workload} · ${e.client} · run ${e.run}/${e.repeat}: ${e.outcome ?? ''} (${clock(e.seconds ?? 0)}; ${clock(total)} in all)\n`,
      );
    }
  }

  private startBar(total: number): void {
    this.bar = new SingleBar({
      stream: this.stream,
      format: '{bar} {value}/{total} · {workload} · {client} · run {run} · {phase} {stepTime} · {duration_formatted} in all · ETA {eta}',
      barsize: 20,
      hideCursor: true,
      clearOnComplete: true,
      linewrap: false,
      etaBuffer: 20,
      fps: 4,
    });
    this.bar.start(total, 0, this.payload());
    this.timer = setInterval(() => this.redraw(), 1000).unref();
  }

  private payload(): Record<string, string> {
    const e = this.current;
    return {
      workload: e?.workload ?? '',
      client: e?.client ?? '',
      run: e ? `${e.run}/${e.repeat}` : '',
      phase: this.phase,
      stepTime: clock((performance.now() - this.stepStart) / 1000),
      eta: this.eta(),
    };
  }

  /** The steps left at the mean time of the finished ones, less the time already in the next. */
  private eta(): string {
    const total = this.current?.total ?? 0;
    if (this.finished === 0 || total === 0) return '-';
    const now = (performance.now() - this.t0) / 1000;
    const left = (this.finishedS / this.finished) * (total - this.finished) - (now - this.finishedS);
    return clock(Math.max(0, left));
  }

  private redraw(): void {
    this.bar?.update(this.payload());
  }

  done(): void {
    this.quiet?.stop();
    this.quiet = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.bar?.stop();
    this.bar = undefined;
  }
}
