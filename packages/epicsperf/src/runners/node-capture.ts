// The capture runner of this project's client (`node`): the capture task of docs/runners.md,
// a CaptureSession writing with h5wasm, stopped by `stop`, SIGINT, SIGTERM or the end of stdin.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { CaptureError } from '../capture/writer.js';
import { ThreadedWriter } from '../capture/worker.js';
import { CaptureSession } from '../capture/session.js';
import { packageVersion } from '../doctor.js';
import { emit, fail as failRunner } from './protocol.js';

/** A usage or file error (code 2) is the caller's input: the orchestrator says so. */
function fail(message: string, code = 1): never {
  return failRunner(message, code, code === 2 ? { input: true } : {});
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    names: { type: 'string' },
    out: { type: 'string' },
    'flush-ms': { type: 'string' },
    force: { type: 'boolean' },
    'gap-check': { type: 'string' },
    'connect-timeout-ms': { type: 'string' },
    options: { type: 'string' },
    environment: { type: 'string' },
  },
});
if (positionals[0] !== 'capture') fail(`this runner serves the capture task only, not "${positionals[0] ?? ''}"`, 2);
if (!values.names || !values.out || !values['flush-ms']) fail('capture: --names, --out and --flush-ms are required', 2);
const names = readFileSync(values.names, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean);
const flushMs = Number(values['flush-ms']);
const version = packageVersion();

// a file-size limit (ulimit -f) makes the write fail with EFBIG instead of killing the process
process.on('SIGXFSZ', () => {});

let writer: ThreadedWriter;
try {
  writer = await ThreadedWriter.open(values.out, {
    force: values.force === true,
    toolVersion: version,
    options: JSON.parse(values.options ?? '{}'),
    environment: JSON.parse(values.environment ?? '{}'),
  });
} catch (err) {
  fail((err as Error).message, err instanceof CaptureError ? 2 : 1);
}

const session = new CaptureSession(writer, {
  names,
  flushMs,
  gapCheck: values['gap-check'] ? new RegExp(values['gap-check']) : undefined,
  connectTimeoutMs: Number(values['connect-timeout-ms'] ?? 5000),
  warn: (message) => emit({ ev: 'warn', message }),
  onFlush: (f) => emit({ ev: 'flush', updates: f.updates, dataBytes: f.bytes, ms: Math.round(f.ms * 100) / 100 }),
  onFailure: (reason) => emit({ ev: 'stopped', reason }),
});

let state: 'ready' | 'starting' | 'capturing' | 'stopping' | 'stopped' = 'ready';
let exitWhenStopped = false;

async function stop(): Promise<void> {
  if (state === 'stopping' || state === 'stopped') return;
  while (state === 'starting') await new Promise((r) => setTimeout(r, 20));
  state = 'stopping';
  const summary = await session.stop('node', version);
  state = 'stopped';
  emit({ ev: 'summary' }, Buffer.from(JSON.stringify(summary)));
  if (exitWhenStopped) process.exit(0);
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void stop());

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = line.trim();
  if (cmd === 'start' && state === 'ready') {
    state = 'starting';
    void session.start().then(
      (missing) => {
        state = 'capturing';
        emit({ ev: 'capturing', pvs: names.length - missing.length, missing: missing.slice(0, 20), missingCount: missing.length });
      },
      (err: Error) => fail(`cannot start the capture: ${err.message}`),
    );
  } else if (cmd === 'stop') void stop();
  else if (cmd === 'exit') {
    exitWhenStopped = true;
    if (state === 'stopped' || state === 'ready') process.exit(0);
    void stop();
  }
});
// the orchestrator is gone: keep what was captured, then leave
rl.on('close', () => {
  exitWhenStopped = true;
  if (state === 'ready') {
    void writer.close().finally(() => process.exit(0));
    return;
  }
  void stop();
});

emit({ ev: 'ready', client: 'node', version });
