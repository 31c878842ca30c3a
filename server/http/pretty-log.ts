// The log for a person at a terminal: when stdout is a TTY, each JSON line pino writes is
// rewritten as `12:04:05.123 INFO  message key=value …` (coloured by level); anywhere else
// (a pipe, a file, the journal) the lines stay JSON. One line in, one line out, so a line is
// never split or mixed with another.

const LEVELS: Readonly<Record<number, readonly [string, string]>> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
}
/** Fields every line has, shown in the head of the line or not at all. */
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname'])

export function prettyLine(line: string, colour = true): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line)
  } catch {
    return line
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return line
  const [name, code] = LEVELS[entry.level as number] ?? [String(entry.level), '0']
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : ''
  const level = colour ? `\u001b[${code}m${name}\u001b[0m` : name
  const rest = Object.entries(entry)
    .filter(([key]) => !HEAD.has(key))
    .map(([key, value]) => `${key}=${shown(key, value)}`)
  return `${[time, level, typeof entry.msg === 'string' ? entry.msg : '', ...rest].filter(Boolean).join(' ')}\n`
}

function shown(key: string, value: unknown): string {
  // An error's stack reads better on lines of its own, indented under its entry.
  if (key === 'err' && value && typeof value === 'object' && typeof (value as { stack?: unknown }).stack === 'string') {
    return `\n    ${(value as { stack: string }).stack.replaceAll('\n', '\n    ')}`
  }
  // Quoted (and escaped) when it has a space, a quote or a control character: an escape sequence must not reach the terminal.
  if (typeof value === 'string' && !/[\s"\p{Cc}]/u.test(value)) return value
  // JSON escapes the C0 controls but leaves DEL and the C1 ones (\u009b begins a sequence too).
  return JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
