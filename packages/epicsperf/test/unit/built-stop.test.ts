// stopBuilds (toolchains/built.ts), in a file of its own since it stops every later build of the
// process: a build under way ends at once with what it started, leaves no output and no reason
// kept, and no other build starts.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildError, buildIfChanged, type BuildPlan, stopBuilds } from '../../src/toolchains/built.js';
import { alive } from 'epicsperf-testkit/python';
import { waitFor } from 'epicsperf-testkit/wait';

const tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-stop-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const plan = (name: string): BuildPlan => {
  const src = join(tmp, `${name}.txt`);
  writeFileSync(src, name);
  return {
    what: `the ${name} runners`,
    path: join(tmp, 'out', name),
    folder: true,
    inputs: [src],
    key: {},
    // A build tool and the compiler it starts: both write their pid, then take 30 s.
    steps: () => [
      {
        tool: 'sh',
        command: 'sh',
        args: ['-c', `echo $$ > "${tmp}/${name}.tool"; sh -c 'echo $$ > "${tmp}/${name}.compiler"; sleep 30' & wait`],
      },
    ],
  };
};

it('stops a build under way with the compiler it started, keeps nothing, and starts no other', async () => {
  const quiet = { progress: () => {} };
  const t0 = Date.now();
  const under = buildIfChanged(plan('slow'), quiet);
  await waitFor(() => existsSync(join(tmp, 'slow.compiler')), 10_000, 'the compiler');
  const pids = ['tool', 'compiler'].map((f) => Number(readFileSync(join(tmp, `slow.${f}`), 'utf8')));
  stopBuilds();
  expect(await under).toEqual({ error: 'stopped' });
  expect(Date.now() - t0).toBeLessThan(10_000);
  await waitFor(() => pids.every((p) => !alive(p)), 5000, 'the build tool and its compiler gone');
  expect(existsSync(join(tmp, 'out', 'slow'))).toBe(false);
  expect(existsSync(join(tmp, 'out', 'slow.tmp'))).toBe(false);
  expect(buildError(join(tmp, 'out', 'slow'))).toBeUndefined();
  expect(await buildIfChanged(plan('later'), quiet)).toEqual({ error: 'stopped' });
  expect(existsSync(join(tmp, 'later.tool'))).toBe(false);
});
