// Runner `caget-procs` (snapshot only): one c-libca `get` process per PV, all started at once,
// as the 2012 study's Node variant did with caget. Speaks the runner protocol itself.
import { spawn } from 'node:child_process';
import { emit, fail, onCommand } from './protocol.js';
import { parseRunnerArgs } from './args.js';

const args = parseRunnerArgs(undefined, { caget: { type: 'string' } });
const caget = args.flags.caget as string | undefined;
if (!caget) fail('--caget PATH is required', 2);
if (args.task !== 'snapshot') fail('caget-procs runs the snapshot task only', 2);

type Row = { ok: true; value: number | number[] | string; elapsedMs: number } | { ok: false; error: string; elapsedMs: number };
let rows: Row[] = [];

// A failure to start one of thousands of processes (a process or file limit) fails that PV.
process.on('uncaughtException', (err) => fail(`caget-procs: ${err.message}`));

function getOne(name: string, t0: number): Promise<Row> {
  return new Promise((resolve) => {
    const child = spawn(caget!, ['get', name, '--timeout-ms', String(args.timeoutMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => resolve({ ok: false, error: e.message, elapsedMs: performance.now() - t0 }));
    child.on('close', (code) => {
      const elapsedMs = performance.now() - t0;
      const line = out.trim();
      if (code === 0 && line.startsWith(name)) {
        resolve({ ok: true, value: parseCagetValue(line.slice(name.length).trim()), elapsedMs });
      } else {
        resolve({ ok: false, error: err.trim().split('\n').pop() || `exit code ${code}`, elapsedMs });
      }
    });
  });
}

/** caget's value text: a number, "COUNT v1 v2 ..." for an array, otherwise a string. */
function parseCagetValue(text: string): number | number[] | string {
  const tokens = text.split(/\s+/);
  const nums = tokens.map(Number);
  if (tokens.length > 1 && nums.every(Number.isFinite) && nums[0] === tokens.length - 1) return nums.slice(1);
  return text !== '' && tokens.length === 1 && Number.isFinite(nums[0]) ? nums[0]! : text;
}

emit({ ev: 'ready', client: 'caget-procs', version: 'libca' });
onCommand((cmd) => {
  if (cmd === 'start') {
    const t0 = performance.now();
    void Promise.all(args.names.map((n) => getOne(n, t0))).then((r) => {
      rows = r;
      emit({ ev: 'done' });
    });
  } else if (cmd === 'ship') emit({ ev: 'results' }, Buffer.from(JSON.stringify(rows)));
  else if (cmd === 'exit') process.exit(0);
});
