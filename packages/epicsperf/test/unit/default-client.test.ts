// The default client is declared once (DEFAULTS.client): it is a declared client whose runner serves
// every task and captures, and the commands that take one --client default to it. Runs nothing.
import { Command, type Option } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { findClient, TASKS } from '../../src/clients/registry.js';
import { DEFAULTS } from '../../src/defaults.js';

// Another default than the shipped one, so that a command writing its own shows.
vi.mock(import('../../src/defaults.js'), async (original) => {
  const { DEFAULTS } = await original();
  return { DEFAULTS: { ...DEFAULTS, client: 'p4p' } };
});

describe('the default client', () => {
  it('is a declared client whose runner serves every task and captures', async () => {
    const { DEFAULTS: shipped } = await vi.importActual<typeof import('../../src/defaults.js')>('../../src/defaults.js');
    const spec = findClient(shipped.client);
    expect(spec, shipped.client).toBeDefined();
    expect(spec!.tasks).toEqual(expect.arrayContaining([...TASKS]));
    expect(spec!.capture).toBe(true);
  });

  it.each(['monitor', 'latency', 'capture'])("is %s's --client default", async (name) => {
    expect(DEFAULTS.client).toBe('p4p');
    const program = new Command();
    const { register } = (await import(`../../src/cli/${name}.ts`)) as { register(p: Command): void };
    register(program);
    const command = program.commands.find((c) => c.name() === name)!;
    const option = (command.options as readonly Option[]).find((o) => o.long === '--client');
    expect(option?.defaultValue).toBe('p4p');
  });
});
