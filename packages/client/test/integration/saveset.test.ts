// Save, compare and restore through the library, over CA and PVA, against the built-in IOC with
// its access security: a save keeps what each PV gave (a missing one as such), a live compare
// finds exactly the PVs changed since (tolerances catch and forgive), a restore puts them back
// and skips what it may not write, and a dry run, a declined confirmation or an interruption
// writes nothing it does not report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import type { Context } from '../../src/index.js';
import { compare, compareLive, parseSnapshot, restore, save, writeSnapshot, type SaveSet } from '../../src/saveset/index.js';
import { contextFor, setGate as gate } from 'epicsperf-testkit/client-helpers';

let ioc: Ioc;
let ctx: Context;
const K = 'TEST:KIND:';
const NAMES = ['DOUBLE', 'LONG', 'ENUM', 'STRING', 'ARR:DOUBLE', 'ARR:SHORT', 'FLOAT', 'GATED'].map((k) => K + k);
const MISSING = 'TEST:NO:SUCH:PV';

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0, accessSecurity: true });
  ctx = contextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

const setGate = (open: boolean): Promise<void> => gate(ctx, K, open);

describe.each([
  ['ca', ''],
  ['pva', 'pva://'],
] as const)('over %s', (proto, prefix) => {
  const names = [...NAMES, MISSING].map((n) => prefix + n);
  const pv = (k: string): string => prefix + K + k;

  it('saves value, type, count, alarm, time, units, precision and enum states; a missing PV as not answered', async () => {
    const t0 = Date.now() / 1000;
    const set = await save(ctx, names, { timeout: 1500, comment: 'before the shift', labels: ['golden'] });
    expect(set.meta).toMatchObject({ protocol: proto, comment: 'before the shift', labels: ['golden'] });
    expect(set.meta.host).toBeTruthy();
    const by = new Map(set.pvs.map((p) => [p.name, p]));
    expect(set.pvs.map((p) => p.name)).toEqual(names);
    expect(by.get(pv('DOUBLE'))).toMatchObject({
      ok: true,
      value: 3.14159,
      type: 'double',
      count: 1,
      units: 'mm',
      precision: 4,
      severity: 0,
    });
    expect(by.get(pv('ENUM'))).toMatchObject({
      ok: true,
      value: 1,
      type: 'enum',
      enumStrings: expect.arrayContaining(['Off', 'On', 'Fault']),
    });
    expect(by.get(pv('STRING'))).toMatchObject({ ok: true, value: 'hello epics', type: 'string' });
    expect(by.get(pv('ARR:DOUBLE'))).toMatchObject({ ok: true, value: [0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25], count: 10 });
    expect(by.get(pv('ARR:SHORT'))!.value).toEqual([0, -300, -600, -900, -1200, -1500, -1800, -2100, -2400, -2700]);
    expect(by.get(pv('LONG'))).toMatchObject({ value: 42, units: 'counts' });
    expect(by.get(pv('DOUBLE'))!.seconds).toBeGreaterThan(t0 - 3600);
    const missing = by.get(prefix + MISSING)!;
    expect(missing.ok).toBe(false);
    expect(missing.error).toMatch(/TIMEOUT|NOT_FOUND/);
    // The file keeps all of it.
    expect(parseSnapshot(writeSnapshot(set))).toEqual(set);
  });

  it('a live compare finds exactly the PVs changed; tolerances catch and forgive; restore puts them back', async () => {
    const set = await save(ctx, names, { timeout: 1500 });
    await setGate(false); // GATED: no write access from now on
    try {
      await Promise.all([
        ctx.put(pv('DOUBLE'), 3.2),
        ctx.put(pv('ENUM'), 2),
        ctx.put(pv('STRING'), 'changed'),
        ctx.put(pv('ARR:DOUBLE'), [0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 99]),
      ]);
      const d = await compareLive(ctx, set, { timeout: 1500 });
      const changed = d.pvs
        .filter((p) => p.status === 'different')
        .map((p) => p.name)
        .sort();
      expect(changed).toEqual(['ARR:DOUBLE', 'DOUBLE', 'ENUM', 'STRING'].map(pv).sort());
      expect(d.pvs.find((p) => p.name === prefix + MISSING)!.status).toBe('not-connected');
      expect(d.equal).toBe(false);
      const dbl = d.pvs.find((p) => p.name === pv('DOUBLE'))!;
      expect(dbl).toMatchObject({ a: 3.14159, b: 3.2 });
      expect(dbl.difference).toBeCloseTo(0.05841, 5);
      expect(d.pvs.find((p) => p.name === pv('ENUM'))).toMatchObject({ a: 'On', b: 'Fault' });
      expect(d.pvs.find((p) => p.name === pv('ARR:DOUBLE'))).toMatchObject({ elementsDiffering: 1, largestDifference: 87.75 });

      // 0.1 absolute forgives the double's 0.058, not the array's 87.75; PSI's rule (1 x 10^-PREC 4) forgives nothing.
      const loose = compare(set, d.live, { tolerance: { abs: 0.1 } });
      expect(
        loose.pvs
          .filter((p) => p.status === 'different')
          .map((p) => p.name)
          .sort(),
      ).toEqual(['ARR:DOUBLE', 'ENUM', 'STRING'].map(pv).sort());
      const prec = compare(set, d.live, { tolerance: { precision: 1 } });
      expect(prec.summary.different).toBe(4);
      const perPv = compare(set, d.live, { tolerance: (n) => (n === pv('DOUBLE') ? { rel: 0.02 } : undefined) });
      expect(perPv.summary.different).toBe(3);

      const rep = await restore(ctx, set, { timeout: 1500 });
      const outcome = Object.fromEntries(rep.pvs.map((r) => [r.name, r.outcome]));
      expect(outcome).toMatchObject({
        [pv('DOUBLE')]: 'restored',
        [pv('ENUM')]: 'restored',
        [pv('STRING')]: 'restored',
        [pv('ARR:DOUBLE')]: 'restored',
        [pv('LONG')]: 'equal',
        [pv('ARR:SHORT')]: 'equal',
        [pv('FLOAT')]: 'equal',
        [prefix + MISSING]: 'skipped',
      });
      expect(rep.pvs.find((r) => r.name === prefix + MISSING)!.code).toBe('not-saved');
      // GATED equals its save, so nothing is asked of it: make it differ and restore it alone.
      expect(outcome[pv('GATED')]).toBe('equal');
      expect(rep.summary).toMatchObject({ selected: 9, restored: 4, equal: 4, skipped: 1, failed: 0, notWritten: 0 });
      expect((await compareLive(ctx, set, { timeout: 1500 })).summary).toMatchObject({ different: 0, notConnected: 1 });
    } finally {
      await setGate(true);
    }
  });

  it('a PV without write access is skipped and reported; a read-only PV of the save is not written', async () => {
    const set = await save(ctx, [pv('GATED'), pv('LONG')], { timeout: 1500 });
    await Promise.all([ctx.put(K + 'GATED', 6), ctx.put(K + 'LONG', 43)]);
    await setGate(false);
    try {
      set.pvs[1]!.readOnly = true;
      const rep = await restore(ctx, set, { timeout: 1500 });
      const gated = rep.pvs[0]!;
      expect(gated).toMatchObject({ outcome: 'skipped', code: 'no-access' });
      // PV Access tells no rights beforehand: the server's refusal of the put says it.
      if (proto === 'pva') expect(gated.reason).toMatch(/no write access \(the server: .*Put not permitted/);
      expect(rep.pvs[1]).toMatchObject({ outcome: 'skipped', code: 'read-only' });
      expect((await ctx.get(K + 'GATED')).value).toBe(6);
      expect((await ctx.get(K + 'LONG')).value).toBe(43);
    } finally {
      await setGate(true);
      await Promise.all([ctx.put(K + 'GATED', 5), ctx.put(K + 'LONG', 42)]);
    }
  });

  it('an enum saved by its state name with no states (as a PSI .snap keeps it) is written, read back as restored, and compares equal live', async () => {
    const set: SaveSet = {
      meta: { time: new Date().toISOString(), host: 'h', protocol: proto },
      pvs: [{ name: pv('ENUM'), ok: true, value: 'Fault' }],
    };
    try {
      const rep = await restore(ctx, set, { timeout: 1500 });
      expect(rep.pvs[0]).toMatchObject({ outcome: 'restored', saved: 'Fault', before: 'On', after: 'Fault' });
      expect((await ctx.get(K + 'ENUM')).value).toBe(2);
      expect((await compareLive(ctx, set, { timeout: 1500 })).pvs[0]).toMatchObject({ status: 'equal', a: 'Fault', b: 'Fault' });
      // Equal now: nothing is written.
      expect((await restore(ctx, set, { timeout: 1500 })).pvs[0]!.outcome).toBe('equal');
    } finally {
      await ctx.put(K + 'ENUM', 1);
    }
  });

  it('a dry run, a declined confirmation and an interrupted restore write nothing and say so', async () => {
    const set = await save(ctx, [pv('DOUBLE'), pv('LONG')], { timeout: 1500 });
    await ctx.put(pv('DOUBLE'), 1.5);
    try {
      const dry = await restore(ctx, set, { timeout: 1500, dryRun: true });
      expect(dry.pvs[0]).toMatchObject({ outcome: 'not-written', code: 'dry-run', saved: 3.14159, before: 1.5 });
      expect(dry.pvs[1]!.outcome).toBe('equal');
      let asked = 0;
      const declined = await restore(ctx, set, {
        timeout: 1500,
        confirm: (plan) => {
          asked = plan.changes.length;
          return false;
        },
      });
      expect(asked).toBe(1);
      expect(declined.pvs[0]).toMatchObject({ outcome: 'not-written', code: 'declined' });
      const ac = new AbortController();
      ac.abort();
      const cut = await restore(ctx, set, { timeout: 1500, signal: ac.signal });
      expect(cut.interrupted).toBe(true);
      expect(cut.summary.restored).toBe(0);
      expect((await ctx.get(K + 'DOUBLE')).value).toBe(1.5);
    } finally {
      await ctx.put(K + 'DOUBLE', 3.14159);
    }
  });
});
