// The array workload on every element type of the built-in IOC: each update checked element by
// element by the runners that read the native type (CA and PVA), and the IOC's own published rate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARRAY_TYPES, startIoc, type Ioc } from '../../src/ioc/index.js';
import { findClient, prepareClients } from '../../src/clients/index.js';
import { runMonitor } from '../../src/bench/monitor.js';

let python: string;
beforeAll(async () => {
  python = await prepareClients(
    NATIVE.map((n) => findClient(n)!),
    true,
  );
});

const ELEMENTS = 100_000;
/** The runners that read the native type, of both protocols. */
const NATIVE = ['node', 'node-pva', 'c-libca', 'c-pvxs', 'p4p', 'java-caj', 'java-corepva'];

describe.each(ARRAY_TYPES.map((t) => [t] as const))('PREFIX:ARRAY as %s', (type) => {
  let ioc: Ioc;
  beforeAll(async () => {
    ioc = await startIoc({ records: 1, rate: 0, arrayElements: ELEMENTS, arrayRate: 20, arrayType: type, python });
  });
  afterAll(async () => {
    await ioc?.stop();
  });

  it.each(NATIVE)('%s: every element of 4 updates equals the update number', async (name) => {
    const run = await runMonitor({
      task: 'array',
      client: findClient(name)!,
      python,
      env: ioc.env,
      names: [ioc.prefix + 'ARRAY'],
      samples: 4,
      rate: 20,
      warmupMs: 200,
      array: { elements: ELEMENTS, type, checkAll: true, iocStats: () => ioc.stats() },
    });
    expect(run.error).toBeUndefined();
    expect(run.array!.corrupt).toBe(0);
    expect(run.array!.valueErrors).toBe(0);
    expect(run.array!.elements).toBe(ELEMENTS);
    expect(run.array!.updates).toBe(4);
    // The IOC counted what it published over the same window.
    expect(run.array!.server!.updatesPerSecond).toBeGreaterThan(0);
  });
});

describe('int8 update numbers wrap', () => {
  let ioc: Ioc;
  beforeAll(async () => {
    ioc = await startIoc({ records: 1, rate: 0, arrayElements: 1000, arrayRate: 'max', arrayType: 'int8', python });
  });
  afterAll(async () => {
    await ioc?.stop();
  });

  it.each(['node', 'c-pvxs', 'java-caj', 'java-corepva'])(
    '%s: 400 updates across the wrap (unsigned over CA, signed over PVA), none corrupt or backwards',
    async (name) => {
      const run = await runMonitor({
        task: 'array',
        client: findClient(name)!,
        python,
        env: ioc.env,
        names: [ioc.prefix + 'ARRAY'],
        samples: 400,
        rate: 1000,
        warmupMs: 200,
        array: { elements: 1000, type: 'int8', checkAll: true, iocStats: () => ioc.stats() },
      });
      expect(run.error).toBeUndefined();
      expect(run.array!.corrupt).toBe(0);
      expect(run.array!.valueErrors).toBe(0);
      // The updates received plus those skipped span more than one turn of the 8-bit counter.
      expect(run.array!.updates + run.array!.skipped + run.array!.repeats).toBeGreaterThan(256);
    },
  );
});
