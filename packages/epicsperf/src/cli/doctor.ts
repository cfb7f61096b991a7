// `epicsperf doctor`: the machine, the runtimes and every client library.
import type { Command } from 'commander';
import { doctor } from '../doctor.js';
import { formatOption } from '../options.js';

export function register(program: Command): void {
  program
    .command('doctor')
    .description('report Node, Python, OS, CPU, memory and the version of every client library')
    .addOption(formatOption(['table', 'json'] as const))
    .action(async (opts: { format: 'table' | 'json' }) => {
      const r = await doctor();
      if (opts.format === 'json') {
        process.stdout.write(JSON.stringify(r, null, 2) + '\n');
        return;
      }
      const rows: [string, string][] = [
        ['epicsperf', r.epicsperf],
        ['node', r.node],
        ['os', `${r.os.platform} ${r.os.release} ${r.os.arch}`],
        ['cpu', `${r.cpu.model} (${r.cpu.cores} cores)`],
        ['memory', `${(r.memoryBytes / 2 ** 30).toFixed(1)} GiB`],
        [
          'python',
          r.python.version ? `${r.python.version} (${r.python.kind}: ${r.python.executable})` : `missing: ${r.python.error ?? ''}`,
        ],
      ];
      for (const [name, lib] of Object.entries({ ...r.toolchains, ...r.libraries }))
        rows.push([name, lib.version ? lib.version + (lib.error ? `  (${lib.error})` : '') : `missing: ${lib.error ?? ''}`]);
      const w = Math.max(...rows.map(([k]) => k.length));
      process.stdout.write(rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n');
    });
}
