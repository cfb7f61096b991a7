// The JSON Schemas shipped in schema/ are generated from the result types (scripts/schemas.mjs, npm
// run schemas): the committed files are what the types give today, and a file edited by hand fails
// the same check.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_DIR, schemaErrors } from '../helpers/schema.js';

const SCRIPT = join(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'schemas.mjs');

/** `scripts/schemas.mjs --check` on each folder (one generation): its exit code and the files it named. */
const check = (dirs: string[]) =>
  new Promise<{ code: number; stale: string[] }>((done) => {
    execFile(process.execPath, [SCRIPT, '--check', ...dirs.flatMap((d) => ['--dir', d])], (err, _stdout, stderr) =>
      done({ code: err ? ((err.code as number | undefined) ?? 1) : 0, stale: stderr.split('\n').filter(Boolean) }),
    );
  });

const tmp = mkdtempSync(join(tmpdir(), 'epicsperf-schemas-'));
let res: { code: number; stale: string[] };
beforeAll(async () => {
  // A copy of the shipped schemas, one of them edited by hand: a required field dropped.
  cpSync(SCHEMA_DIR, tmp, { recursive: true });
  const file = join(tmp, 'monitor.schema.json');
  const schema = JSON.parse(readFileSync(file, 'utf8'));
  schema.$defs.MonitorRun.required = ['client'];
  writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
  res = await check([SCHEMA_DIR, tmp]);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the shipped JSON Schemas', () => {
  it('are what the result types give (else: npm run schemas)', () => {
    expect(res.stale.filter((line) => line.startsWith(SCHEMA_DIR))).toEqual([]);
  });

  it('fail the check when one is edited by hand, naming it', () => {
    expect(res.code).toBe(1);
    expect(res.stale.filter((line) => line.startsWith(tmp))).toEqual([
      `${join(tmp, 'monitor.schema.json')} is not what the result types give: run npm run schemas (never edit it by hand)`,
    ]);
  });

  it('hold what the types require: a document without a required field, with one they do not declare, or a fraction for a count fails', () => {
    const run = { client: 'node', ok: true };
    const doc = { schema: 'epicsperf/monitor@1', options: {}, run };
    expect(schemaErrors('monitor', doc)).toEqual([]);
    expect(schemaErrors('monitor', { ...doc, run: { ok: true } })).not.toEqual([]);
    expect(schemaErrors('monitor', { ...doc, run: { ...run, extra: 1 } })).not.toEqual([]);
    expect(schemaErrors('monitor', { ...doc, run: { ...run, iocCpuPercent: { median: 1, min: 1, max: 1, mean: 1, n: 1.5 } } })).not.toEqual(
      [],
    );
  });
});
