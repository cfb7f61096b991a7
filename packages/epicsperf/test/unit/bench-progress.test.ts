// The bench's progress off a terminal (cli/progress.ts): one line per finished step, and while a
// step says nothing an indented heartbeat, which ends with the step.
import { expect, it } from 'vitest';
import { BenchProgress } from '../../src/cli/progress.js';

it('off a terminal: an indented heartbeat while a step runs, one line when it ends, then silence', async () => {
  const lines: string[] = [];
  const stream = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
  const p = new BenchProgress(stream, 100);
  const step = { index: 1, total: 2, workload: 'snapshot 97+15', client: 'pyepics', run: 1, repeat: 1 };
  p.step({ ...step, phase: 'start' });
  await new Promise((r) => setTimeout(r, 350));
  const beats = lines.length;
  expect(beats).toBeGreaterThanOrEqual(2);
  for (const l of lines) expect(l).toMatch(/^ {2}still running \[1\/2\] snapshot 97\+15 · pyepics · run 1\/1 \(\d+s\)\n$/);
  p.step({ ...step, phase: 'end', seconds: 0.4, outcome: '97/112 answered' });
  expect(lines.at(-1)).toMatch(/^\[1\/2\] snapshot 97\+15 · pyepics · run 1\/1: 97\/112 answered \(0 s; 0 s in all\)\n$/);
  await new Promise((r) => setTimeout(r, 300));
  expect(lines).toHaveLength(beats + 1);
  p.done();
});
