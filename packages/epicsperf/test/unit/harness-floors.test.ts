// The floors of the three packages: every import goes down a floor, never up or sideways between
// folders, and no cycle, between folders or between files (within a folder too). The tool (packages/epicsperf/src/README.md) reaches the client
// only through `epics-client`, `epics-client/ca` and `epics-client/pva`; the client imports nothing
// but node:*. Reads the sources, runs nothing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** A package's rules: each unit's floor (a folder of src/, or a file directly in src/; a unit imports only units on lower floors). */
interface Rules {
  floors: Record<string, number>;
  /** What a unit may import beyond the floor rule's "anything lower". */
  only?: Record<string, (target: string) => boolean>;
  /** A workload reached from another workload's folder only through these modules (its operations). */
  operations?: Record<string, readonly string[]>;
  /** Units that are programs of their own (the commands, the Node runners): they reach a workload's folder past its operations. */
  programs?: readonly string[];
  /** Why a bare import (a package) is not allowed, or undefined when it is. */
  bare: (spec: string) => string | undefined;
}

const CLIENT_ENTRIES = new Set(['epics-client', 'epics-client/ca', 'epics-client/pva', 'epics-client/saveset', 'epics-client/server']);

/** The tool's floors. */
const FLOORS: Record<string, number> = {
  // helpers that import nothing of the tool
  errors: 0,
  log: 0,
  children: 0,
  defaults: 0,
  home: 0,
  lock: 0,
  progress: 0,
  procstat: 0,
  clock: 0,
  // data and formats: result shapes (and their store)
  results: 1,
  // the Python environment; the reports (pure functions of results); the runners of other
  // languages built on first use, and their toolchains
  pyenv: 2,
  report: 2,
  toolchains: 2,
  // services the workloads use: runner processes started and run (launch/), the built-in IOC, the
  // environment report
  launch: 3,
  ioc: 3,
  doctor: 3,
  // the clients: their declarations (clients.json), how each is prepared and started; the
  // command-line options the commands and the workloads share
  clients: 4,
  options: 4,
  // the server runners (the server workloads' apps): their declarations, how each is started
  servers: 4,
  // hosts as places to run runners; operations on them (bench's capture workload calls capture's)
  hosts: 5,
  capture: 6,
  bench: 7,
  // the agent: another host's runners and IOC, served to an orchestrator; the bench's workloads,
  // each declared once, and the suite over them; the Node runners (programs of their own)
  agent: 8,
  workloads: 8,
  runners: 8,
  // the commands
  cli: 9,
};

const TOOL: Rules = {
  floors: FLOORS,
  // report reads results and the floor-0 helpers only
  only: { report: (t) => t === 'results' || FLOORS[t] === 0 },
  operations: { capture: ['capture/orchestrate.ts'] },
  programs: ['cli', 'runners'],
  bare: (spec) =>
    (spec === 'epics-client' || spec.startsWith('epics-client/')) && !CLIENT_ENTRIES.has(spec)
      ? `the client only through ${[...CLIENT_ENTRIES].join(', ')}`
      : undefined,
};

/** The client's floors: the sans-I/O cores, the sockets, the APIs (the client's and the server's), the entry point. */
const CLIENT: Rules = {
  // wire: what both protocols' cores share (the byte writer, the retry schedule); the CA and PVA
  // cores on one floor, so neither imports the other.
  floors: { log: 0, wire: 0, ca: 1, pva: 1, transport: 2, client: 3, server: 3, index: 4, saveset: 4 },
  bare: (spec) => (spec.startsWith('node:') ? undefined : 'the client has no dependency: node:* only'),
};

/** The unit of a path relative to src/: its first folder, or the file's name without `.ts`. */
function unitOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.ts$/, '');
}

/** Every broken rule among `files` (paths relative to src/, posix separators, to their text). */
/** epics-ops's floors: helpers, then PV lists, snapshot files and reports, then the commands. */
const OPS: Rules = {
  floors: {
    errors: 0,
    options: 0,
    table: 0,
    atomic: 0,
    version: 0,
    pvlist: 1,
    read: 1,
    'saveset-report': 1,
    files: 2,
    'snapshot-report': 2,
    cli: 3,
    main: 4,
    index: 4,
  },
  bare: (spec) =>
    spec.startsWith('node:') || spec === 'commander' || CLIENT_ENTRIES.has(spec)
      ? undefined
      : 'epics-ops depends on commander and the client (through its exports) only',
};

function checkFloors(files: ReadonlyMap<string, string>, rules: Rules = TOOL): string[] {
  const { floors: FLOORS, only: ONLY = {}, operations: OPERATIONS = {}, programs: PROGRAMS = [] } = rules;
  const problems: string[] = [];
  const edges = new Map<string, Map<string, string>>();
  const fileEdges = new Map<string, Map<string, string>>();
  for (const [file, text] of files) {
    const from = unitOf(file);
    if (FLOORS[from] === undefined) problems.push(`${file}: ${from} has no floor (add it to FLOORS and to src/README.md)`);
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!spec.startsWith('.')) {
        const why = rules.bare(spec);
        if (why) problems.push(`${file}: imports ${spec} (${why})`);
        continue;
      }
      const target = posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts');
      if (target.startsWith('../')) {
        problems.push(
          `${file}: imports ${spec}, outside the package's sources${/client/.test(target) ? ' (the client only through its package exports)' : ''}`,
        );
        continue;
      }
      if (!fileEdges.has(file)) fileEdges.set(file, new Map());
      fileEdges.get(file)!.set(target, target);
      const to = unitOf(target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      edges.get(from)!.set(to, `${file} -> ${target}`);
      const [ff, ft] = [FLOORS[from], FLOORS[to]];
      if (ff === undefined || ft === undefined) continue;
      if (ft >= ff)
        problems.push(`${file} -> ${target}: ${from} (floor ${ff}) imports ${to} (floor ${ft}), ${ft > ff ? 'upward' : 'sideways'}`);
      else if (ONLY[from] && !ONLY[from]!(to)) problems.push(`${file} -> ${target}: ${from} may not import ${to}`);
      const ops = OPERATIONS[to];
      if (ops && !PROGRAMS.includes(from) && !ops.includes(target))
        problems.push(`${file} -> ${target}: ${to} is reached through ${ops.join(', ')} only`);
    }
  }
  for (const cycle of folderCycles(edges)) {
    const path = cycle.map((u, i) => edges.get(u)!.get(cycle[(i + 1) % cycle.length]!)!);
    problems.push(`folder cycle ${[...cycle, cycle[0]].join(' -> ')}: ${path.join('; ')}`);
  }
  for (const cycle of folderCycles(fileEdges)) problems.push(`file cycle ${[...cycle, cycle[0]].join(' -> ')}`);
  return problems;
}

/** One cycle per strongly connected component of more than one unit (Tarjan). */
function folderCycles(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc = new Set<string>();
    for (let w = ''; w !== v; ) {
      w = stack.pop()!;
      onStack.delete(w);
      scc.add(w);
    }
    if (scc.size > 1) cycles.push(cycleIn(v, scc, edges));
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** A path from `start` back to itself inside one component (breadth first). */
function cycleIn(start: string, scc: ReadonlySet<string>, edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!scc.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return path;
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** The repository root: the nearest folder above this file whose package.json has workspaces. */
function repoRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { workspaces?: unknown }).workspaces) return dir;
    if (dirname(dir) === dir) throw new Error('no repository root above the test');
  }
}

function readSources(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) files.set(relative(root, p).split('\\').join('/'), readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return files;
}

describe("the tool's floors", () => {
  // FLOORS_SRC points the check at another tree (an older layout, to see it fail).
  const src = process.env.FLOORS_SRC ?? join(repoRoot(), 'packages', 'epicsperf', 'src');

  it('every import goes down a floor, no folder cycle, the client only through its exports', () => {
    const files = readSources(src);
    expect(files.size).toBeGreaterThan(50);
    expect(checkFloors(files)).toEqual([]);
  });

  it('finds an upward import, a sideways one, a cycle and a deep client import', () => {
    const problems = checkFloors(
      new Map([
        ['launch/process.ts', "import { x } from '../bench/suite.js';"],
        [
          'bench/suite.ts',
          "import { RunnerProcess } from '../launch/process.js';\nimport { startCapture } from '../capture/orchestrate.js';",
        ],
        ['capture/orchestrate.ts', "export { y } from '../capture/writer.js';\nimport type { Z } from 'epics-client/ca';"],
        ['capture/writer.ts', "import { Context } from 'epics-client/dist/client/index.js';"],
        ['ioc/index.ts', "import { RunnerProcess } from '../launch/process.js';"],
        ['report/html.ts', "import { heldRate } from '../bench/headroom.js';\nimport { z } from '../../../client/src/ca/index.js';"],
        ['bench/capture.ts', "import { ThreadedWriter } from '../capture/worker.js';"],
        ['widgets/x.ts', "import { DEFAULTS } from '../defaults.js';"],
      ]),
    );
    const has = (text: string) =>
      expect(
        problems.some((p) => p.includes(text)),
        `${text} in\n${problems.join('\n')}`,
      ).toBe(true);
    has('launch/process.ts -> bench/suite.ts: launch (floor 3) imports bench (floor 7), upward');
    has('ioc/index.ts -> launch/process.ts: ioc (floor 3) imports launch (floor 3), sideways');
    has('folder cycle');
    has('capture/writer.ts: imports epics-client/dist/client/index.js');
    has('report/html.ts: imports ../../../client/src/ca/index.js, outside');
    has('report/html.ts -> bench/headroom.ts');
    has('bench/capture.ts -> capture/worker.ts: capture is reached through capture/orchestrate.ts only');
    has('widgets has no floor');
    expect(problems.filter((p) => p.startsWith('bench/suite.ts') || p.startsWith('capture/orchestrate.ts'))).toEqual([]);
  });
});

describe("epics-ops's floors", () => {
  it('helpers, then files and reports, then the commands: every import goes down, no cycle, commander and the client only', () => {
    const files = readSources(join(repoRoot(), 'packages', 'ops', 'src'));
    expect(files.size).toBeGreaterThan(15);
    expect(checkFloors(files, OPS)).toEqual([]);
  });
});

describe("the client's floors", () => {
  const src = join(repoRoot(), 'packages', 'client', 'src');

  it('cores, then sockets, then the API: every import goes down, no folder cycle, node:* only', () => {
    const files = readSources(src);
    expect(files.size).toBeGreaterThan(50);
    expect(checkFloors(files, CLIENT)).toEqual([]);
  });

  it('finds a core that reaches up into the API, one protocol reaching into the other, a dependency and a cycle within a folder', () => {
    const problems = checkFloors(
      new Map([
        ['ca/circuit.ts', "import { Context } from '../client/context.js';"],
        ['pva/buffer.ts', "import { ByteWriter } from '../ca/writer.js';"],
        ['transport/stream.ts', "import { pino } from 'pino';\nimport { Socket } from 'node:net';"],
        ['pva/messages.ts', "import { encodeOp } from './messages-ops.js';"],
        ['pva/messages-ops.ts', "import type { Message } from './messages.js';"],
      ]),
      CLIENT,
    );
    expect(problems).toEqual([
      'ca/circuit.ts -> client/context.ts: ca (floor 1) imports client (floor 3), upward',
      'pva/buffer.ts -> ca/writer.ts: pva (floor 1) imports ca (floor 1), sideways',
      'transport/stream.ts: imports pino (the client has no dependency: node:* only)',
      'file cycle pva/messages.ts -> pva/messages-ops.ts -> pva/messages.ts',
    ]);
  });
});
