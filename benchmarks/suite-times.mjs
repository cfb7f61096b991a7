#!/usr/bin/env node
// Where the test suite's time goes, from vitest's JSON reports (`npm test -- --reporter=default
// --reporter=json --outputFile.json=run.json`): each file's duration, its project and its number
// of tests, one column per report, as a Markdown table, slowest first; then each report's span
// from the first file's start to the last file's end, the files run at once on average, and the
// slowest tests. Usage: node benchmarks/suite-times.mjs before.json [after.json ...] [--tests N]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const testsAt = args.indexOf('--tests');
const slowest = testsAt >= 0 ? Number(args.splice(testsAt, 2)[1]) : 10;
if (args.length === 0) {
  process.stderr.write('usage: node benchmarks/suite-times.mjs report.json [report.json ...] [--tests N]\n');
  process.exit(2);
}

const short = (name) => name.replace(/^.*?\/packages\//, '');
const reports = args.map((file) => {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const files = new Map(
    r.testResults.map((t) => [
      short(t.name),
      { s: (t.endTime - t.startTime) / 1000, start: t.startTime, end: t.endTime, tests: t.assertionResults.length },
    ]),
  );
  const tests = r.testResults.flatMap((t) =>
    t.assertionResults.map((a) => ({ file: short(t.name), title: a.title, s: (a.duration ?? 0) / 1000, status: a.status })),
  );
  return { name: basename(file, '.json'), r, files, tests };
});

const names = [...new Set(reports.flatMap((x) => [...x.files.keys()]))];
const key = (n) => Math.max(...reports.map((x) => x.files.get(n)?.s ?? 0));
names.sort((a, b) => key(b) - key(a));
const cell = (x, n) => {
  const f = x.files.get(n);
  return f ? `${f.s.toFixed(1)} (${f.tests})` : '-';
};
const out = [];
out.push(`| file | ${reports.map((x) => `${x.name}: s (tests)`).join(' | ')} |`);
out.push(`|---|${reports.map(() => '---:').join('|')}|`);
for (const n of names) out.push(`| ${n} | ${reports.map((x) => cell(x, n)).join(' | ')} |`);
out.push('');
for (const x of reports) {
  const all = [...x.files.values()];
  const start = Math.min(...all.map((f) => f.start));
  const end = Math.max(...all.map((f) => f.end));
  const busy = all.reduce((a, f) => a + f.s, 0);
  const passed = x.tests.filter((t) => t.status === 'passed').length;
  const failed = x.tests.filter((t) => t.status === 'failed').length;
  out.push(
    `${x.name}: ${all.length} files, ${passed} passed, ${failed} failed; vitest run ${(x.r.startTime ? (end - x.r.startTime) / 1000 : 0).toFixed(0)} s from its start, files from ${((start - (x.r.startTime ?? start)) / 1000).toFixed(0)} s to ${((end - (x.r.startTime ?? start)) / 1000).toFixed(0)} s; file time ${busy.toFixed(0)} s, ${(busy / ((end - start) / 1000)).toFixed(1)} files at once on average`,
  );
}
for (const x of reports) {
  out.push('', `${x.name}, slowest tests:`);
  for (const t of [...x.tests].sort((a, b) => b.s - a.s).slice(0, slowest)) out.push(`- ${t.s.toFixed(1)} s ${t.file}: ${t.title}`);
}
process.stdout.write(out.join('\n') + '\n');
