// How commands print: a table for people, JSON (--json) for scripts; errors as one line on
// stderr, or with --json as {"error":{"code","message"}} on stdout; progress of long work
// on stderr (one rewritten line on a terminal, plain lines otherwise; none with --json).

export interface OutputOptions {
  readonly json?: boolean
}

export function printResult(options: OutputOptions, value: unknown, human: () => string): void {
  process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`)
}

/**
 * `extra`: more members of the JSON error (a plugin error's location and code frame). The
 * message's names are quoted already (quotedName); any other control character in it (words of
 * the database or of a config file) is escaped here, its line breaks and a code frame's tabs
 * kept; in JSON, the DEL and C1 controls that JSON.stringify leaves as they are.
 */
export function printError(json: boolean, code: string, message: string, extra: Record<string, unknown> = {}): void {
  if (json) process.stdout.write(`${printable(JSON.stringify({ error: { code, message, ...extra } }, null, 2))}\n`)
  else process.stderr.write(`entityctl: ${printable(message)}\n`)
}

/**
 * Text for the terminal: its line breaks and tabs, and any other control character escaped as
 * JSON escapes it (`\r`, `\u001b`), DEL and the C1 controls too (`\u009b`). Here, not with
 * quotedName (server/model/control-characters.ts): help and usage errors load nothing of the server.
 */
export function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => {
    if (c === '\n' || c === '\t') return c
    const escaped = JSON.stringify(c).slice(1, -1)
    return escaped.length > 1 ? escaped : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

/**
 * A name (or any stored text) as a table, list or tree shows it, on one line: as it is, or, with
 * a control character (one stored before names were checked, or by SQL), as a JSON string with
 * every control escaped, `"Red\u001b[31m"`, as quotedName (server/model/control-characters.ts)
 * repeats it in messages: the terminal does not run it, nor does a line break forge a row.
 * --json needs none of this: JSON escapes it already.
 */
export function shownName(text: string): string {
  if (!/\p{Cc}/u.test(text)) return text
  return JSON.stringify(text).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Names listed in one cell, each shown on its own: `Sales, "Red\u001b[31m"`. */
export function shownNames(names: readonly string[]): string {
  return names.map(shownName).join(', ')
}

/** Rows as aligned columns; every cell shown as shownName shows a name, so no stored text reaches the terminal raw. */
export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)'
  const text = (v: unknown) => shownName(v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()
  return [line([...columns]), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => text(r[c]))))].join('\n')
}

export interface Progress {
  /** Says what the command is doing now. */
  step(text: string): void
  /** Clears the line on a terminal; nothing otherwise. */
  done(): void
}

/** Progress of work that takes seconds, so that a command is never silent for long. */
export function progress(options: OutputOptions): Progress {
  if (options.json) return { step: () => {}, done: () => {} }
  const stream = process.stderr
  if (!stream.isTTY) return { step: (text) => stream.write(`entityctl: ${text}\n`), done: () => {} }
  const started = Date.now()
  let current = ''
  let timer: NodeJS.Timeout | undefined
  const draw = () => stream.write(`\r\x1b[2K${current} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  return {
    step(text) {
      current = `${text}…`
      timer ??= setInterval(draw, 1000).unref()
      draw()
    },
    done() {
      if (!timer) return
      clearInterval(timer)
      timer = undefined
      stream.write('\r\x1b[2K')
    },
  }
}
