// The bench runners' command line (docs/runners.md, Start): the task, the names file and the
// task's options. The harness passes every value; the runners keep no defaults of their own.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fail } from './protocol.js';
import { TASKS, type Task } from '../clients/registry.js';

export interface RunnerArgs {
  task: Task;
  names: string[];
  timeoutMs: number;
  samples: number;
  /** array-put: elements per put and the element type of the target. */
  elements: number;
  type: string;
  /** latency: the array sizes, in order. */
  sizes: number[];
  flags: Record<string, string | boolean | undefined>;
}

export function parseRunnerArgs(argv = process.argv.slice(2), extra: Record<string, { type: 'boolean' | 'string' }> = {}): RunnerArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      names: { type: 'string' },
      'timeout-ms': { type: 'string' },
      samples: { type: 'string' },
      'check-all': { type: 'boolean' },
      'no-callback': { type: 'boolean' },
      elements: { type: 'string' },
      type: { type: 'string' },
      sizes: { type: 'string' },
      ...extra,
    },
  });
  const task = positionals[0];
  if (!TASKS.includes(task as Task)) fail(`unknown task "${task ?? ''}"`, 2);
  if (!values.names) fail('--names FILE is required', 2);
  // The harness passes every value the task needs: the runners keep no defaults of their own.
  if (task === 'snapshot' && values['timeout-ms'] === undefined) fail('snapshot: --timeout-ms N is required', 2);
  if (task !== 'snapshot' && values.samples === undefined) fail(`${task}: --samples N is required`, 2);
  if (task === 'array-put' && (values.elements === undefined || values.type === undefined))
    fail('array-put: --elements N and --type T are required', 2);
  if (task === 'latency' && values.sizes === undefined) fail('latency: --sizes N,N,... is required', 2);
  const names = readFileSync(values.names as string, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return {
    task: task as Task,
    elements: Number(values.elements ?? 0),
    type: (values.type as string | undefined) ?? 'double',
    sizes: ((values.sizes as string | undefined) ?? '').split(',').filter(Boolean).map(Number),
    names,
    timeoutMs: Number(values['timeout-ms']),
    samples: Number(values.samples),
    flags: values as Record<string, string | boolean | undefined>,
  };
}
