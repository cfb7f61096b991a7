// The bench workloads, each declared once (packages/epicsperf/src/workloads/): the list is what
// the suite runs, what `bench` accepts and what the reports show; each workload's results have a
// place in the results schema, and the schema has no entry no workload fills.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ran, WORKLOADS } from '../../src/workloads/index.js';
import { loadResults } from '../../src/results/store.js';
import { countSteps } from '../../src/workloads/suite.js';
import { CLIENTS } from '../../src/clients/index.js';
import type { Workloads } from '../../src/workloads/workload.js';

const schema = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'schema', 'bench.schema.json'), 'utf8')) as {
  properties: Record<string, unknown>;
};
/** The results' entries that are not one workload's. */
const RUN_ENTRIES = ['schema', 'startedAt', 'durationS', 'host', 'environment', 'hosts', 'options', 'unavailable'];
const FIXTURES = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'results');

/** Every `client` named anywhere in a run's workload entries, in the order met. */
function clientsIn(x: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(x)) for (const v of x) clientsIn(v, out);
  else if (x && typeof x === 'object') {
    for (const [k, v] of Object.entries(x)) {
      if (k === 'client' && typeof v === 'string') out.add(v);
      else clientsIn(v, out);
    }
  }
  return out;
}

const asked = (profile: 'quick' | 'full') => WORKLOADS.map((w) => ({ w, asked: w.ask({}, profile, true) }));

describe('the workload registry', () => {
  it('one name per workload, and each asks for an entry of its own', () => {
    expect(new Set(WORKLOADS.map((w) => w.name)).size).toBe(WORKLOADS.length);
    const keys = asked('full').map((x) => Object.keys(x.asked));
    for (const k of keys) expect(k).toHaveLength(1);
    expect(new Set(keys.flat()).size).toBe(WORKLOADS.length);
  });

  it("each workload's entry is in the results schema, and every entry of the schema is a workload's", () => {
    const keys = asked('full').flatMap((x) => Object.keys(x.asked));
    const entries = Object.keys(schema.properties).filter((k) => !RUN_ENTRIES.includes(k));
    expect(entries.sort()).toEqual([...keys].sort());
  });

  it('a workload with nothing to run takes no step and reports nothing', async () => {
    const none: Workloads = { snapshot: [], monitor: false };
    expect(countSteps({ repeat: 3, workloads: none }, CLIENTS)).toBe(0);
    for (const w of WORKLOADS) expect(w.figures({ snapshot: [] } as never)).toEqual([]);
    expect(ran({ snapshot: [] } as never)).toEqual({ workloads: [], clients: [] });
  });

  it('`epicsperf results` lists a run by what its workloads report: each one it ran, and every client in them', () => {
    for (const f of ['run-a.json', 'run-b.json']) {
      const r = loadResults(join(FIXTURES, f));
      const entries = Object.fromEntries(Object.entries(r).filter(([k]) => !RUN_ENTRIES.includes(k)));
      expect(ran(r)).toEqual({ workloads: ['97+15', '1000+95', 'monitor', 'array', 'latency'], clients: [...clientsIn(entries)] });
    }
  });

  it('every workload counts its steps from the clients that serve it, and the ramps run each step once', () => {
    for (const { w, asked: a } of asked('quick')) {
      const ws: Workloads = { snapshot: [], monitor: false, ...a };
      const n1 = w.steps(ws, CLIENTS, 1);
      expect(n1, w.name).toBeGreaterThan(0);
      expect(w.steps(ws, CLIENTS, 2), w.name).toBe(w.ramp ? n1 : 2 * n1);
      expect(w.steps(ws, [], 1), w.name).toBe(0);
    }
  });

  it('the run options stored with every run are decided by the workloads, each by one', () => {
    const keys = WORKLOADS.flatMap((w) => Object.keys(w.runOptions?.({}, 'quick') ?? {}));
    expect(keys.sort()).toEqual(['rate', 'records', 'samples', 'timeoutMs']);
  });

  it('an option two workloads share is one option, and no two options have one flag', () => {
    const options = [...new Set(WORKLOADS.flatMap((w) => w.options))];
    const flags = options.map((o) => o.long);
    expect(new Set(flags).size).toBe(flags.length);
  });
});
