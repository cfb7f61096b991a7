// Validates a JSON output against packages/epicsperf/schema/*.schema.json (JSON Schema 2020-12, formats checked),
// the schemas generated from the result types (scripts/schemas.mjs); a bench run's JSON, checked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import type { BenchResults } from '../../src/results/index.js';

/** The folder of the shipped schemas. */
export const SCHEMA_DIR = join(import.meta.dirname, '..', '..', 'schema');

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')), file.replace('.schema.json', ''));
}

/** The schema's complaints about `doc` (empty when it conforms). */
export function schemaErrors(kind: 'monitor' | 'snapshot' | 'capture' | 'bench', doc: unknown): string[] {
  const validate = ajv.getSchema(kind)!;
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** `epicsperf bench <args> --format json --no-keep`: exits 0, with JSON the bench schema accepts; its results and progress. */
export async function benchJson(args: string[], timeoutMs: number): Promise<{ results: BenchResults; stderr: string }> {
  const r = await runCli(['bench', ...args, '--format', 'json', '--no-keep'], { timeoutMs });
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', results)).toEqual([]);
  return { results, stderr: r.stderr };
}
