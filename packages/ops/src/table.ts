// Plain-text tables people can read at a glance: pure functions from rows to text.
export interface Column<T> {
  header: string;
  get: (row: T) => string;
  align?: 'left' | 'right';
}

export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => c.get(r)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

export function renderMarkdown<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const head = `| ${columns.map((c) => esc(c.header)).join(' | ')} |`;
  const sep = `|${columns.map((c) => (c.align === 'right' ? '---:' : '---')).join('|')}|`;
  return [head, sep, ...rows.map((r) => `| ${columns.map((c) => esc(c.get(r))).join(' | ')} |`)].join('\n') + '\n';
}

export function csvField(v: unknown): string {
  const s = v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}
