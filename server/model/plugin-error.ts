// A plugin that cannot be loaded. A mistake in the plugin's model names the file, the entity
// and the property; a syntax error or a misuse of the plugin API found while the file runs
// names the file, line and column, shows the code around it, and for a misspelt builder
// method or export the nearest correct name ("did you mean required?").

import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { CollectionBuilder, method, p, ReferenceBuilder, ScalarBuilder } from '../plugin.ts'
import { closestName } from '../errors.ts'

export interface PluginPosition {
  /** The file as the plugins folder names it (e.g. plugins/library.ts). */
  readonly file: string
  readonly line: number
  readonly column: number
}

export class PluginError extends Error {
  /** The file, as the plugins folder names it. */
  readonly source: string
  /** The entity, property or part of the declaration; empty when the position says it all. */
  readonly where: string
  readonly problem: string
  /** Where in the file, when known. */
  readonly position?: PluginPosition
  /** The message's first line: `file:line:column: where: problem`, or `file: where: problem`. */
  readonly summary: string
  /** The lines around the position, the column marked. */
  readonly frame?: string

  constructor(source: string, where: string, problem: string, position?: { line: number; column: number; frame?: string }) {
    const summary = [position ? `${source}:${position.line}:${position.column}` : source, where, problem].filter(Boolean).join(': ')
    super(position?.frame ? `${summary}\n${position.frame}` : summary)
    this.name = 'PluginError'
    this.source = source
    this.where = where
    this.problem = problem
    this.summary = summary
    if (position) {
      this.position = { file: source, line: position.line, column: position.column }
      this.frame = position.frame
    }
  }
}

/**
 * The PluginError for an error thrown by importing a plugin file (`absolute` its path,
 * `source` its name for people): positioned when the error says where in that file it arose.
 */
export function pluginImportError(source: string, absolute: string, error: unknown): PluginError {
  const problem = ((error as Error)?.message ?? String(error)).split('\n')[0]
  const position = positionIn(absolute, error)
  const hint = suggestion(problem)
  const text = hint ? `${problem}; did you mean ${hint}?` : problem
  if (!position) return new PluginError(source, 'import', text)
  return new PluginError(source, '', text, { ...position, frame: codeFrame(absolute, position.line, position.column) })
}

/**
 * A mistake in the model a plugin declares (build-model.ts: "Shelf.Item: references unknown
 * entity") with the position of that declaration in the file, found by its names: the line of
 * `entity('Shelf'`, then the first `Item:` after it. Unchanged when the names are not found.
 */
export function withDeclarationPosition(error: PluginError): PluginError {
  if (error.position) return error
  // A responsibility or an option of the plugin is found by its name alone, from the top.
  const top = /^(responsibility |plugin\.)/.test(error.where)
  const [first, ...rest] = error.where.replace(/^responsibility |^plugin\./, '').split('.')
  let source: string
  try {
    source = readFileSync(error.source, 'utf8')
  } catch {
    return error
  }
  const lines = source.split(/\r?\n/)
  const find = (pattern: RegExp, from: number): { line: number; column: number } | undefined => {
    for (let i = from; i < lines.length; i++) {
      const at = lines[i].search(pattern)
      if (at !== -1) return { line: i + 1, column: at + 1 }
    }
    return undefined
  }
  const escapeRegExp = (name: string) => name.replace(/[^\w]/g, '\\$&')
  let found = top
    ? find(new RegExp(`\\b${escapeRegExp(first)}\\s*:`), 0)
    : find(new RegExp(`\\bentity\\(\\s*['"\`]${escapeRegExp(first)}['"\`]`), 0)
  for (const part of rest) {
    if (!found) break
    const next = find(new RegExp(`\\b${escapeRegExp(part)}\\s*:`), found.line - 1)
    if (next) found = next
  }
  if (!found || !/^[\w.]+$/.test(first)) return error
  return new PluginError(error.source, error.where, error.problem, { ...found, frame: codeFrame(error.source, found.line, found.column) })
}

/**
 * Where the error arose in the file. A syntax error's stack starts with `file:line`, the
 * code and a caret line under the column (Node's type stripping and V8 alike); an error
 * thrown while the module runs has a stack frame `file:line:column` in the file.
 */
function positionIn(absolute: string, error: unknown): { line: number; column: number } | undefined {
  // Without the ?reload=<n> of a reload (load-plugins.ts): the position is in the file either way.
  const stack = String((error as Error)?.stack ?? '').replace(/\?reload=\d+/g, '')
  const lines = stack.split('\n')
  const head = /^(.+):(\d+)$/.exec(lines[0] ?? '')
  if (head && samePath(head[1], absolute)) {
    const caret = lines.findIndex((line, i) => i > 0 && /^\s*\^+\s*$/.test(line))
    return { line: Number(head[2]), column: caret > 0 ? lines[caret].indexOf('^') + 1 : 1 }
  }
  const href = pathToFileURL(absolute).href
  for (const line of lines) {
    for (const name of [href, absolute]) {
      const at = line.indexOf(`${name}:`)
      if (at === -1) continue
      const match = /^:(\d+):(\d+)/.exec(line.slice(at + name.length))
      if (match) return { line: Number(match[1]), column: Number(match[2]) }
    }
  }
  return undefined
}

function samePath(named: string, absolute: string): boolean {
  try {
    return (named.startsWith('file:') ? fileURLToPath(named) : named) === absolute
  } catch {
    return false
  }
}

/** Two lines before the position, its line with a caret under the column, one line after. */
export function codeFrame(file: string, line: number, column: number): string | undefined {
  let source: string
  try {
    source = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  const lines = source.split(/\r?\n/)
  if (line < 1 || line > lines.length) return undefined
  const first = Math.max(1, line - 2)
  const last = Math.min(lines.length, line + 1)
  const width = String(last).length
  const out: string[] = []
  for (let n = first; n <= last; n++) {
    out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${lines[n - 1]}`)
    if (n === line) out.push(`  ${' '.repeat(width)} | ${lines[n - 1].slice(0, column - 1).replace(/[^\t]/g, ' ')}^`)
  }
  return out.join('\n')
}

const methodsOf = (type: { prototype: object }) => Object.getOwnPropertyNames(type.prototype).filter((name) => name !== 'constructor')
const PLUGIN_EXPORTS = ['entity', 'p', 'method', 'plugin', 'sum']

/** The nearest correct name for a misspelt plugin API name in the error's message. */
function suggestion(problem: string): string | undefined {
  let match = /^(.+)\.(\w+) is not a function$/.exec(problem)
  if (match) return closestName(match[2], candidatesAfter(match[1]))
  match = /^(\w+) is not (?:a function|defined)$/.exec(problem)
  if (match) return closestName(match[1], PLUGIN_EXPORTS)
  match = /does not provide an export named '(\w+)'/.exec(problem)
  if (match) return closestName(match[1], PLUGIN_EXPORTS)
  return undefined
}

/** The names that may follow `receiver.` in the plugin API. */
function candidatesAfter(receiver: string): readonly string[] {
  if (receiver === 'p') return Object.keys(p)
  if (receiver === 'method') return Object.keys(method)
  if (receiver.startsWith('p.reference(')) return methodsOf(ReferenceBuilder)
  if (receiver.startsWith('p.many(')) return methodsOf(CollectionBuilder)
  if (receiver.startsWith('p.')) return methodsOf(ScalarBuilder)
  return [...new Set([...methodsOf(ScalarBuilder), ...methodsOf(ReferenceBuilder), ...methodsOf(CollectionBuilder)])]
}
