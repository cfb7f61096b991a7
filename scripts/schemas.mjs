// The JSON Schemas of epicsperf's JSON outputs (packages/epicsperf/schema/, shipped in the package),
// generated from the result types the code writes (packages/epicsperf/src/results/ and epics-ops's
// snapshot document), so that the shapes are declared once. `node scripts/schemas.mjs` (npm run
// schemas) writes them; `--check` writes nothing and fails naming each file that differs from what
// the types give (a unit test runs it); `--dir <dir>` (once or more) reads or writes other folders.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import tsj from 'ts-json-schema-generator';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each schema file (`<name>.schema.json`) and the type of the document it describes; each
 *  document names its format in its `schema` field, which is the schema's `$id`. */
const DOCUMENTS = {
  bench: 'BenchResults',
  monitor: 'MonitorDocument',
  capture: 'CaptureDocument',
  snapshot: 'SnapshotDocument',
};

/** Draft-07 as the generator writes it, made JSON Schema 2020-12: `definitions` are `$defs`, a
 *  tuple's `items` list is `prefixItems` (and `additionalItems` its `items`). */
function to2020(node) {
  if (Array.isArray(node)) return node.map(to2020);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') out.$ref = v.replace(/^#\/definitions\//, '#/$defs/');
    else if (k === 'items' && Array.isArray(v)) out.prefixItems = to2020(v);
    else if (k === 'additionalItems') out.items = to2020(v);
    // names of fields and definitions, not keywords: only their schemas change
    else if (k === 'properties' || k === '$defs') out[k] = Object.fromEntries(Object.entries(v).map(([n, d]) => [n, to2020(d)]));
    else out[k] = to2020(v);
  }
  return out;
}

/** The schema of each document, by file name, as the types declare it today. */
function generate() {
  const generator = tsj.createGenerator({
    path: join(ROOT, 'packages/epicsperf/src/results/index.ts'),
    // The repository's tsconfig maps epics-ops and epics-client to their sources (as the typecheck does).
    tsconfig: join(ROOT, 'tsconfig.json'),
    skipTypeCheck: true,
    topRef: false,
    sortProps: false,
    additionalProperties: false,
  });
  const schemas = {};
  for (const [name, type] of Object.entries(DOCUMENTS)) {
    const { $schema: _draft07, definitions, title, description, ...root } = generator.createSchema(type);
    const id = root.properties?.schema?.const;
    if (typeof id !== 'string') throw new Error(`${type} has no \`schema\` field of one format: it names the schema's $id`);
    const defs = Object.keys(definitions ?? {}).length ? { $defs: definitions } : {};
    schemas[name] = to2020({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: id,
      ...(title && { title }),
      ...(description && { description }),
      ...root,
      ...defs,
    });
  }
  return schemas;
}

const text = (schema) => `${JSON.stringify(schema, null, 2)}\n`;

const { values } = parseArgs({ options: { check: { type: 'boolean' }, dir: { type: 'string', multiple: true } } });
const dirs = values.dir ?? [join(ROOT, 'packages/epicsperf/schema')];
const schemas = generate();
if (values.check) {
  const stale = dirs.flatMap((dir) =>
    Object.entries(schemas)
      .map(([name, schema]) => ({ file: join(dir, `${name}.schema.json`), want: text(schema) }))
      .filter(({ file, want }) => {
        try {
          return readFileSync(file, 'utf8') !== want;
        } catch {
          return true;
        }
      }),
  );
  for (const { file } of stale)
    process.stderr.write(`${file} is not what the result types give: run npm run schemas (never edit it by hand)\n`);
  process.exitCode = stale.length ? 1 : 0;
} else {
  for (const dir of dirs) {
    mkdirSync(dir, { recursive: true });
    for (const [name, schema] of Object.entries(schemas)) writeFileSync(join(dir, `${name}.schema.json`), text(schema));
  }
}
