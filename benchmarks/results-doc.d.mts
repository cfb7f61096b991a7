// Types of benchmarks/results-doc.mjs, for the test that keeps docs/results.md up to date.
export interface ParsedTable {
  title: string | undefined;
  lines: string[];
  header: string[];
  rows: string[][];
}
export function parseResultMarkdown(text: string): {
  recorded: { command: string; date: string; host: string } | undefined;
  tables: ParsedTable[];
};
export function benchCommand(json: unknown): string;
export function soakCommand(json: unknown): string;
export function fill(root: string, template: string, where: string): string;
/** What docs/results.md and README.md should hold, keyed by their paths from the repository root. */
export function renderDocs(root?: string): Record<'docs/results.md' | 'README.md', string>;
