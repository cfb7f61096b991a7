// One put-driven runner's life as the orchestrator sees it (array-put, latency): spawn, ready,
// start, connected, the workload's own steps, exit; a failure or its deadline becomes the row's error.
import type { Runner } from '../launch/process.js';
import { runOnce } from '../launch/run.js';
import { decodeSamples, type Sample } from './samples.js';
import type { ClientSpec } from '../clients/index.js';
import type { Host } from '../hosts/host.js';
import { LocalHost } from '../hosts/local-host.js';

export interface SessionOptions {
  client: ClientSpec;
  python: string;
  /** Where the runner runs (default: here). */
  host?: Host;
  env: Record<string, string>;
  /** The runner's task and its options after `--names FILE`. */
  task: string;
  names: readonly string[];
  args: readonly string[];
  /** The client's deadline for the whole run (ms): past it the runner is stopped (ClientDeadline). */
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
  /** Called after the runner is ready, before it is told to start. */
  beforeStart?: () => Promise<unknown>;
}

/** What every row of these workloads carries. */
export interface SessionResult {
  ok: boolean;
  version?: string;
  error?: string;
  stoppedAfterS?: number;
  /** The host it ran on, when not here. */
  host?: string;
}

export interface Session {
  runner: Runner;
  progress: (text: string) => void;
}

/**
 * Runs `body` once the runner has connected, fills `result.version`, and ends the runner: asked to
 * exit when `body` returns, killed when it throws (then `result.error` says why).
 */
export async function runSession<R extends SessionResult>(o: SessionOptions, result: R, body: (s: Session) => Promise<void>): Promise<R> {
  const host = o.host ?? new LocalHost(o.python);
  const runner = host.startRunner({ client: o.client.name, task: o.task, names: o.names, args: o.args, env: o.env });
  if (o.host) result.host = o.host.name;
  return runOnce(runner, result, { deadlineMs: o.clientDeadlineMs, onProgress: o.onProgress }, async (progress) => {
    progress('starting');
    const ready = await runner.next('ready', 60_000, 'ready');
    if (typeof ready.version === 'string') result.version = ready.version;
    await o.beforeStart?.();
    runner.send('start');
    progress('connecting');
    await runner.next('connected', 30_000, 'connected');
    await body({ runner, progress });
  });
}

/** Ask the runner for its samples and decode them. */
export async function shipSamples(runner: Runner): Promise<Sample[]> {
  runner.send('ship');
  const shipped = await runner.next('samples', 60_000, 'shipping samples');
  return decodeSamples(shipped.payload ?? new Uint8Array(0));
}
