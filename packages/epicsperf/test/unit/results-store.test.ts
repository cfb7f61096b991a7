// Kept runs: written through a temporary file and a rename (a failed write leaves the old file
// whole and no temporary behind), named by start time and host, read back with their format
// checked, listed oldest first.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAtomic } from 'epics-ops';
import { keepRun, listRuns, loadResults, resultsDir, runStem } from '../../src/results/store.js';

const FIXTURE = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'results', 'run-a.json');

describe('results store', () => {
  it('writeAtomic replaces a file whole; a write that fails leaves the old one and no temporary file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-store-'));
    const f = join(dir, 'r.json');
    writeAtomic(f, 'first\n');
    writeAtomic(f, 'second\n');
    expect(readFileSync(f, 'utf8')).toBe('second\n');
    // The target is a folder: the rename fails after the temporary file was written.
    mkdirSync(join(dir, 'busy'));
    writeFileSync(join(dir, 'busy', 'inside'), 'x');
    expect(() => writeAtomic(join(dir, 'busy'), 'third\n')).toThrow();
    expect(readdirSync(dir).sort()).toEqual(['busy', 'r.json']);
  });

  it('keeps a run as <start>-<host>.json and .html under EPICSPERF_HOME/results, and lists it', () => {
    expect(resultsDir({ EPICSPERF_HOME: '/x/home' })).toBe('/x/home/results');
    expect(resultsDir({ EPICSPERF_HOME: '/x/home', EPICSPERF_RESULTS: '/y/kept' })).toBe('/y/kept');
    const r = loadResults(FIXTURE);
    expect(runStem({ startedAt: '2026-11-20T10:00:00.123Z', host: 'lab a/1' })).toBe('bench-2026-11-20T10-00-00Z-lab_a_1');
    const dir = join(mkdtempSync(join(tmpdir(), 'epicsperf-store-')), 'results');
    const kept = keepRun(dir, r, readFileSync(FIXTURE, 'utf8'), '<html></html>');
    expect(kept.json).toBe(join(dir, 'bench-2026-11-20T10-00-00Z-lab-a.json'));
    expect(readdirSync(dir).sort()).toEqual(['bench-2026-11-20T10-00-00Z-lab-a.html', 'bench-2026-11-20T10-00-00Z-lab-a.json']);
    const list = listRuns(dir);
    expect(list).toHaveLength(1);
    expect(list[0]!.results!.host).toBe('lab-a');
    expect(listRuns(join(dir, 'none'))).toEqual([]);
  });
});
