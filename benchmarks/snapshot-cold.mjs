// Where a small CA snapshot's time goes in a fresh Node process: the 2012 study's 97 names read
// three times in one process, each with a new Context (new sockets, new searches), so the first
// read pays for code V8 has not compiled yet and the later ones do not. Against a running IOC:
//
//   benchmarks/snapshot-cold.sh    (starts the IOC, records benchmarks/results/snapshot-cold.md)
//   node benchmarks/snapshot-cold.mjs ENV_FILE [rounds]    (against an IOC whose `--write-env` file it reads)
//
// Prints the wall ms of reads 1, 2 and 3: the median over the processes (rounds of them), with min-max.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const [envFile, roundsArg] = process.argv.slice(2);
if (envFile === '--one') await one(process.argv[3]);
else if (!envFile) {
  console.error('usage: node benchmarks/snapshot-cold.mjs ENV_FILE [ROUNDS]');
  process.exit(2);
} else main();

async function one(env) {
  loadIocEnv(env);
  const { Context } = await import('epics-client');
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST';
  const names = Array.from({ length: 97 }, (_, i) => `${prefix}:CALC${i + 1}`);
  const out = [];
  for (let k = 0; k < 3; k++) {
    const ctx = new Context();
    const t0 = performance.now();
    const res = await ctx.snapshot(names, { timeout: 1000 });
    out.push({ ms: performance.now() - t0, ok: res.filter((r) => r.ok).length });
    ctx.close();
  }
  console.log(JSON.stringify(out));
}

function main() {
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  for (let i = 0; i < Number(roundsArg ?? 5); i++) {
    const r = spawnSync(process.execPath, [self, '--one', envFile], { encoding: 'utf8' });
    const line = r.stdout.trim().split('\n').pop();
    try {
      rows.push(JSON.parse(line));
    } catch {
      console.error(`a run failed: ${r.stderr.trim().split('\n').pop()}`);
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`A snapshot of 97 names, three reads in each of ${rows.length} fresh processes, each read with a new Context\n`);
  console.log('| read in the process | wall ms | answered |');
  console.log('|---|---:|---:|');
  for (let k = 0; k < 3; k++) {
    const ms = rows.map((r) => r[k].ms);
    console.log(`| ${k + 1} | ${med(ms).toFixed(1)} (${Math.min(...ms).toFixed(1)}-${Math.max(...ms).toFixed(1)}) | ${rows[0][k].ok}/97 |`);
  }
}
