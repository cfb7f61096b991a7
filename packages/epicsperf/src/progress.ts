// Lines on stderr for a person watching a long first-use task (a runner's build, the Python
// environment): the tool's progress at most every few seconds, a heartbeat when it is silent.
/** Where a long task's lines go and how often. */
export interface ProgressOptions {
  /** Each line for a person watching; by default to stderr as `epicsperf setup: <line>`. */
  progress?: ((line: string) => void) | undefined;
  /** A line at least this often while the task runs (the tool's progress, else "still ..."); 8 s. */
  heartbeatMs?: number;
  /** The tool's progress lines at most this often (the latest shown); 2.5 s. */
  throttleMs?: number;
}

/** The default place of progress lines: stderr, as `epicsperf setup: <line>` (stdout is the CLI's). */
export const toStderr = (line: string): void => {
  process.stderr.write(`epicsperf setup: ${line}\n`);
};

/** A duration as a person reads it: 42s, 4m38s. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** The lines of one long task: the tool's progress (throttled), a heartbeat when it is silent. */
export interface Watch {
  /** A line now. */
  say(line: string): void;
  /** A progress line of the tool's: shown now, or (the latest of them) once `throttleMs` has passed. */
  progress(line: string): void;
  /** The time since it started, as `duration` writes it. */
  elapsed(): string;
  stop(): void;
}

/** Watch a task that says `still <doing> (1m40s)` when nothing else was said for `heartbeatMs`. */
export function watch(doing: string, opts: ProgressOptions = {}): Watch {
  const out = opts.progress ?? toStderr;
  const heartbeat = opts.heartbeatMs ?? 8000;
  const throttle = opts.throttleMs ?? 2500;
  const started = Date.now();
  let last = started;
  let pending: string | undefined;
  const say = (line: string): void => {
    last = Date.now();
    pending = undefined;
    out(line);
  };
  const timer = setInterval(
    () => {
      const now = Date.now();
      if (pending !== undefined && now - last >= throttle) say(pending);
      else if (now - last >= heartbeat) say(`still ${doing} (${duration(now - started)})`);
    },
    Math.max(10, Math.min(500, throttle / 4, heartbeat / 4)),
  );
  timer.unref();
  return {
    say,
    progress: (line) => {
      if (Date.now() - last >= throttle) say(line);
      else pending = line;
    },
    elapsed: () => duration(Date.now() - started),
    stop: () => clearInterval(timer),
  };
}
