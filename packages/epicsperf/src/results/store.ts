// Kept bench runs: where they live (--results-dir, else $EPICSPERF_RESULTS, else
// $EPICSPERF_HOME/results), writing a run's
// JSON and HTML without ever leaving a half-written file, listing past runs, and reading a
// stored file back with its format version checked.
import { accessSync, constants, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { writeAtomic } from 'epics-ops';
import { epicsperfHome } from '../home.js';
import { ResultsFileError } from '../errors.js';
import { BENCH_FORMAT, type BenchResults } from './index.js';

/** The default folder of kept runs: $EPICSPERF_RESULTS, else results/ under the home. */
export function resultsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.EPICSPERF_RESULTS ? resolve(env.EPICSPERF_RESULTS) : join(epicsperfHome(env), 'results');
}

/** Makes sure runs can be kept in `dir` (created when missing), before a run is spent on it. */
export function ensureWritable(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new ResultsFileError(`cannot keep results in ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The file stem of a run: its start time and host, safe in a file name. */
export function runStem(r: Pick<BenchResults, 'startedAt' | 'host'>): string {
  const t = r.startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  return `bench-${t}-${r.host.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** Keeps a run in `dir`: `<stem>.json` (written last, so a listed run always has its report). */
export function keepRun(dir: string, results: BenchResults, json: string, html: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, runStem(results));
  writeAtomic(`${stem}.html`, html);
  writeAtomic(`${stem}.json`, json);
  return { json: `${stem}.json`, html: `${stem}.html` };
}

/**
 * A stored bench run, with its format checked: a file of an older format, or not a bench result
 * at all, is a ResultsFileError naming what it found.
 */
export function loadResults(path: string): BenchResults {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ResultsFileError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ResultsFileError(`${path} is not JSON`);
  }
  const schema = typeof doc === 'object' && doc !== null ? (doc as { schema?: unknown }).schema : undefined;
  if (schema === BENCH_FORMAT) return doc as BenchResults;
  if (typeof schema === 'string' && schema.startsWith('epicsperf/bench@')) {
    throw new ResultsFileError(`${path} is in results format ${schema}; this epicsperf reads ${BENCH_FORMAT} only (run the bench again)`);
  }
  throw new ResultsFileError(
    `${path} is not an epicsperf bench result (format ${typeof schema === 'string' ? schema : 'unnamed'}; expected ${BENCH_FORMAT})`,
  );
}

export interface KeptRun {
  file: string;
  results?: BenchResults;
  /** Why the file could not be read. */
  error?: string;
}

/** Every kept run in `dir`, oldest first (a folder that does not exist holds none). */
export function listRuns(dir: string): KeptRun[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  return names.map((n) => {
    const file = join(dir, n);
    try {
      return { file, results: loadResults(file) };
    } catch (err) {
      return { file, error: (err as Error).message.replace(file, basename(file)) };
    }
  });
}
