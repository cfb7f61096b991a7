// What a bench workload declares, once, in its own module of this folder: its name and the
// runners' task it needs, its command-line options with each profile's defaults, how many
// steps it takes, how it runs, and how the reports show it (report/figures.ts WorkloadView).
// The suite (suite.ts), `epicsperf bench` (its options, help and checks) and the reports loop
// over the list in index.ts.
import type { Option } from 'commander';
import type { ClientSpec, Task } from '../clients/index.js';
import type { Placement } from '../bench/placement.js';
import type { DeadlineFor } from '../bench/profiles.js';
import type { WorkloadView } from '../report/figures.js';
import type { BenchResults, BenchRunOptions, EnvironmentReport } from '../results/index.js';
import type { Steps } from './steps.js';

export type ProfileName = 'quick' | 'full';

/** What a run asks of each workload, as stored with its results. */
export type Workloads = BenchRunOptions['workloads'];

/** The run's options that are not one workload's, as stored (the snapshot timeout and the
 *  monitor's size are stored here for every run). */
export type RunOptions = Pick<BenchRunOptions, 'timeoutMs' | 'records' | 'samples' | 'rate'>;

/** The values of `epicsperf bench`'s options, by commander's attribute name. */
export type OptionValues = Readonly<Record<string, unknown>>;

/** What a workload's run gets from the suite. */
export interface SuiteContext {
  /** The clients asked for that are available here, in the order asked. */
  ready: readonly ClientSpec[];
  repeat: number;
  python: string;
  run: RunOptions;
  report: EnvironmentReport;
  placement: Placement;
  /** The deadline of one client on one run of so many seconds of its own. */
  deadline: DeadlineFor;
  steps: Steps;
  progress: (text: string) => void;
}

export interface BenchWorkload extends WorkloadView {
  /** The task (clients.json `tasks`) a client's runner must serve for the client to take part: the
   *  task this workload starts runners for; none for a workload that chooses its clients
   *  otherwise (`clients`). */
  serves?: Task;
  /** Every client asked for has a row, those that cannot run it saying why. */
  rowPerClient?: boolean;
  /** Whether `bench all` runs it on each profile; a ramp (WorkloadView.ramp) always runs the full
   *  profile's, whichever profile the run is on. */
  inAll: Record<ProfileName, boolean>;
  /** Its options of `epicsperf bench`, with their help; an option two workloads share is the same
   *  object in both lists. */
  options: readonly Option[];
  /** What a run of it asks for, from the options given and the profile's defaults (`only`: it is
   *  the run's only workload). */
  ask(o: OptionValues, profile: ProfileName, only: boolean): Partial<Workloads>;
  /** The stored run options it decides (every run stores them, whether it runs or not). */
  runOptions?(o: OptionValues, profile: ProfileName): Partial<RunOptions>;
  /** The clients it can run, for a workload without `serves` (or, run alone, with options that
   *  choose its clients otherwise: undefined for the usual choice): with `list` (`--clients`)
   *  given, those of the list, a usage error naming any other. */
  clients?(list?: string, o?: OptionValues): string[] | undefined;
  /** A usage error for options that do not fit together. */
  check?(o: OptionValues, asked: Partial<Workloads>): void;
  /** Steps it will take (the progress line's denominator; a ramp's most). */
  steps(w: Workloads, ready: readonly ClientSpec[], repeat: number): number;
  /** Runs it, and puts what it found into `results`. */
  run(w: Workloads, ctx: SuiteContext, results: BenchResults): Promise<void>;
}

/** The available clients whose runners serve `task`. */
export const serving = (ready: readonly ClientSpec[], task: Task) => ready.filter((c) => c.tasks.includes(task));

/** An option's default on each profile, for its help: `quick 30, --full 100`. */
export function byProfile<D>(defaults: Record<ProfileName, D>, f: (d: D) => unknown): string {
  return `quick ${String(f(defaults.quick))}, --full ${String(f(defaults.full))}`;
}

/** An option of `bench` whose default is the profile's: none of its own, the profiles' in its help. */
export function profileOption(o: Option, defaults: string): Option {
  o.description = `${o.description} (${defaults})`;
  return o.default(undefined);
}

/** The value of one of its options (commander's attribute name), undefined when not given. */
export const value = <T>(o: OptionValues, key: string): T | undefined => o[key] as T | undefined;
