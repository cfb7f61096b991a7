// Runner for this project's CA client (`node`), with --worker the same inside a worker thread
// (`node-worker`: the main thread speaks the protocol, the worker does the client work), or with
// --pva the same client over PV Access (`node-pva`).
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { emit, fail, onCommand, packageVersion as version } from './protocol.js';
import { parseRunnerArgs, type RunnerArgs } from './args.js';
import { NodeTask, type Shipment } from './node-task.js';

type ToWorker = { cmd: string };
type FromWorker = { type: 'event'; event: Record<string, unknown> } | { type: 'ship'; shipment: Shipment } | { type: 'closed' };

function inline(args: RunnerArgs): void {
  const task = new NodeTask(args, (e) => emit(e));
  emit({ ev: 'ready', client: args.flags.pva ? 'node-pva' : 'node', version: version() });
  onCommand((cmd) => {
    if (cmd === 'start') task.start();
    else if (cmd === 'ship') {
      const s = task.ship();
      emit(s.event, s.payload);
    } else if (cmd === 'exit') void task.close().then(() => process.exit(0));
  });
}

function inWorker(args: RunnerArgs): void {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: args });
  worker.on('error', (err) => fail(`worker thread failed: ${err.message}`));
  worker.on('message', (m: FromWorker) => {
    if (m.type === 'event') emit(m.event);
    else if (m.type === 'ship') emit(m.shipment.event, m.shipment.payload);
    else process.exit(0);
  });
  emit({ ev: 'ready', client: 'node-worker', version: version() });
  onCommand((cmd) => worker.postMessage({ cmd } satisfies ToWorker));
}

function workerMain(): void {
  const port = parentPort!;
  const task = new NodeTask(workerData as RunnerArgs, (event) => port.postMessage({ type: 'event', event } satisfies FromWorker));
  port.on('message', (m: ToWorker) => {
    if (m.cmd === 'start') task.start();
    else if (m.cmd === 'ship') {
      const shipment = task.ship();
      port.postMessage({ type: 'ship', shipment } satisfies FromWorker, [shipment.payload.buffer as ArrayBuffer]);
    } else if (m.cmd === 'exit') void task.close().then(() => port.postMessage({ type: 'closed' } satisfies FromWorker));
  });
}

if (isMainThread) {
  const args = parseRunnerArgs(undefined, { worker: { type: 'boolean' }, pva: { type: 'boolean' } });
  if (args.flags.worker) inWorker(args);
  else inline(args);
} else {
  workerMain();
}
