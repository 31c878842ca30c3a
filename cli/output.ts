// How commands print: a table for people, JSON (--json) for scripts.

export interface OutputOptions {
  readonly json?: boolean
}

export function printResult(options: OutputOptions, value: unknown, human: () => string): void {
  process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`)
}

export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)'
  const text = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()
  return [line([...columns]), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => text(r[c]))))].join('\n')
}
