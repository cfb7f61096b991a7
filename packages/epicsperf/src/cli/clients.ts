// `epicsperf clients`: every client, whether it is available here, and its version.
import type { Command } from 'commander';
import { CLIENTS, clientStatusList } from '../clients/index.js';
import { renderTable } from '../report/table.js';
import { formatOption } from '../options.js';

export function register(program: Command): void {
  program
    .command('clients')
    .description('list every client, whether it is available here, and its version')
    .addOption(formatOption(['table', 'json'] as const))
    .action(async (opts: { format: 'table' | 'json' }) => {
      const format = opts.format;
      const { statuses } = await clientStatusList();
      const rows = statuses.map((s, i) => ({ ...s, spec: CLIENTS[i]! }));
      if (format === 'json') {
        process.stdout.write(
          JSON.stringify(
            rows.map((r) => ({
              name: r.name,
              available: r.available,
              version: r.version,
              reason: r.reason,
              runtime: r.spec.runtime,
              protocol: r.spec.protocol,
              tasks: r.spec.tasks,
              description: r.spec.description,
            })),
            null,
            2,
          ) + '\n',
        );
        return;
      }
      process.stdout.write(
        renderTable(rows, [
          { header: 'client', get: (r) => r.name },
          { header: 'available', get: (r) => (r.available ? 'yes' : 'no') },
          { header: 'version', get: (r) => r.version ?? '' },
          { header: 'runtime', get: (r) => `${r.spec.runtime} ${r.spec.protocol}` },
          { header: 'tasks', get: (r) => r.spec.tasks.join(',') },
          { header: 'description / why missing', get: (r) => (r.available ? r.spec.description : (r.reason ?? '')) },
        ]),
      );
    });
}
