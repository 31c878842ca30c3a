// A request's URL and error messages as the log shows them (Server:LogQueryValues false, the
// default): the values a client sent are replaced by `?`, the shape is kept. A $filter, a
// $search or a function's parameter may hold personal data (a name, an e-mail address), and a
// log is kept longer and read by more people than the data's own permissions allow.
//
//   /api/Customers?$filter=Name eq 'Ada' and Age gt 30&$top=5&@p='x'&$search=ada OR "love lace"
//     → /api/Customers?$filter=Name%20eq%20?%20and%20Age%20gt%20?&$top=5&@p=?&$search=?%20OR%20?
//   /api/Orders/OpenSince(before=2024-01-01)   → /api/Orders/OpenSince(before=?)
//   /api/Customers('ada@example.com')/Orders   → /api/Customers(?)/Orders
//
// The rule, option by option (names as sent; system options in any case, with or without `$`):
//   - $filter, $orderby, $expand, $apply, $compute: every literal becomes `?`: quoted text
//     ('…', "…", duration'…', Namespace.Color'Red'), numbers, dates and times, GUIDs; names,
//     operators, functions, `null`, `true`, `false` and parentheses stay. A $search inside
//     them ($expand=Orders($search=…), $apply=search(…)) is read as $search below;
//   - $search: every word and "phrase" becomes `?`; AND, OR, NOT and parentheses stay;
//   - $top, $skip, $count, $select, $format, $skiptoken (an offset of ours): kept as sent, when
//     they look as they must ($top a number, no quote or @ in $select), else `?`;
//   - parameter aliases (@p), custom options and a GET function's parameters, any other
//     option: the whole value becomes `?`.
// In the path, quoted text and the value of every `name=value` in parentheses (a function's
// parameters, a key given by name) become `?`, but for an alias (`before=@b`, its value in the
// query); a key given alone as a number or GUID stays.
//
// An error message can quote the query (a syntax error quotes the option's text around the
// position, `found 'Ada'`, a value that is not a member of an enumeration): loggedMessage
// replaces, in a message, what the request's URL holds as values.

/** The URL as the log shows it, its values replaced by `?`. */
export function loggedUrl(url: string): string {
  // Most URLs (a key read, a collection) hold nothing to replace: left as they are, at no cost.
  if (PLAIN_URL.test(url)) return url
  const query = url.indexOf('?')
  const path = query < 0 ? url : url.slice(0, query)
  const redactedPath = logged(redactPath(decoded(path)))
  if (query < 0) return redactedPath
  const options = url
    .slice(query + 1)
    .split('&')
    .map((option) => {
      const equals = option.indexOf('=')
      if (equals < 0) return option
      const name = option.slice(0, equals)
      return `${name}=${redactOption(decoded(name), option.slice(equals + 1))}`
    })
  return `${redactedPath}?${options.join('&')}`
}

/**
 * `message` without what `url` holds as values: the text a syntax error quotes (`at position 9
 * in '…'`) is shown as loggedUrl shows its option, and every value of the URL (a literal, a word
 * of $search, a parameter's value) quoted elsewhere in it becomes `?`.
 */
export function loggedMessage(message: string, url: string): string {
  const values = valuesOf(url)
  if (values.texts.length === 0) return message
  let text = message
  const quoted = QUOTING.exec(text)
  if (quoted) text = `${text.slice(0, quoted.index)}${quoted[1]}${redactedExcerpt(quoted[2], values.options)}${quoted[3]}`
  // Those the message holds (one shorter than 3 characters only when quoted, not inside a
  // word), longest first, so that a value containing another is replaced whole.
  const named = values.texts
    .map((value): [string, string] => (value.length >= 3 ? [value, '?'] : [`'${value}'`, "'?'"]))
    .filter(([quoted]) => text.includes(quoted))
  for (const [quoted, replacement] of named.sort((a, b) => b[0].length - a[0].length)) text = text.replaceAll(quoted, replacement)
  return text
}

/**
 * The URL whose values an error's message may quote, when it is not its request's: a $batch
 * request's error that fails the whole batch (odata/handlers/batch-handler.ts) is logged by the
 * error boundary, which knows only the batch's URL.
 */
const QUOTED_URLS = new WeakMap<Error, string>()

/** Records that `error`'s message may quote the values of `url`. */
export function quotesUrl(error: Error, url: string): void {
  QUOTED_URLS.set(error, url)
}

/** The URL `error`'s message may quote the values of: the one recorded for it, else `url`. */
export function urlQuotedBy(error: Error, url: string): string {
  return QUOTED_URLS.get(error) ?? url
}

/** A URL without a query, quotes or `=` (plain or percent-encoded): nothing in it is a value loggedUrl replaces. */
const PLAIN_URL = /^(?:[^?'"=%]|%(?!2[27]|3[dD]))*$/

/** How parse errors quote the text (odata/parser/parse-errors.ts, errors.ts pointAt): at the end of the message. */
const QUOTING = /( at position \d+ in ')([\s\S]*)('\.?)$/

/** System options whose values hold no client data: kept as sent when they look as they must (a number where one is due), else `?`. */
const KEPT = new Map<string, RegExp>([
  ['top', /^\d+$/],
  ['skip', /^\d+$/],
  ['skiptoken', /^\d+$/],
  ['count', /^(?:true|false)$/i],
  ['select', /^[^'"@]*$/],
  ['format', /^[^'"@]*$/],
])
/** System options whose values are expressions: their literals become `?`. */
const EXPRESSIONS = new Set(['filter', 'orderby', 'expand', 'apply', 'compute'])

function systemName(name: string): string | undefined {
  if (name.startsWith('@')) return undefined
  return (name.startsWith('$') ? name.slice(1) : name).toLowerCase()
}

function redactOption(name: string, sent: string): string {
  const system = systemName(name)
  const kept = system === undefined ? undefined : KEPT.get(system)
  if (kept) return kept.test(decoded(sent)) ? sent : '?'
  if (system !== undefined && EXPRESSIONS.has(system)) return logged(redact(decoded(sent), expressionSpans))
  if (system === 'search') return logged(redact(decoded(sent), searchSpans))
  return sent === '' ? '' : '?'
}

/** A part of the URL percent-decoded; one that does not decode as UTF-8 keeps its other escapes. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text.replace(/%(?:2[027]|3d)/gi, (sequence) => decodeURIComponent(sequence))
  }
}

/** Decoded text written back for a log line: spaces, `%`, `&`, `#` and what is not ASCII escaped. */
function logged(text: string): string {
  return encodeURI(text.toWellFormed()).replace(/[&#]/g, (c) => encodeURIComponent(c))
}

type Span = readonly [start: number, end: number]

/** `text` with each span replaced by `?`. */
function redact(text: string, spansOf: (text: string) => Span[]): string {
  return redactWindow(text, spansOf(text), 0, text.length)
}

/** The part [from, to) of `text`, each span in it (or cut by it) replaced by `?`. */
function redactWindow(text: string, spans: readonly Span[], from: number, to: number): string {
  let out = ''
  let at = from
  for (const [start, end] of spans) {
    if (end <= from || start >= to) continue
    out += text.slice(at, Math.max(at, start))
    out += '?'
    at = Math.min(end, to)
  }
  return out + text.slice(at, to)
}

// ── scanning ───────────────────────────────────────────────────────────────────────────────
// Lenient: the log also shows URLs the parser refuses. What it cannot read is a value to hide
// (an unterminated quote runs to the end of the text).

const IDENTIFIER = /[\p{L}\p{Nl}_$][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}.]*/uy
const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/iy
/** A number, date, time or offset as a run: 1.5e-3, 2024-01-31T10:00:00+02:00. */
const NUMERIC = /[0-9][0-9A-Za-z.:+-]*/y

function matchAt(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at
  return pattern.test(text) ? pattern.lastIndex : at
}

/** End of the quoted text whose opening quote (' or ") is at `at`; a quote doubled, or escaped with \ in "…", goes on. */
function quotedEnd(text: string, at: number): number {
  const quote = text[at]
  let i = at + 1
  while (i < text.length) {
    if (quote === '"' && text[i] === '\\') {
      i += 2
      continue
    }
    if (text[i] === quote) {
      if (text[i + 1] === quote) {
        i += 2
        continue
      }
      return i + 1
    }
    i++
  }
  return text.length
}

/** Literals of an expression option; a $search or search() inside it as $search. */
function expressionSpans(text: string): Span[] {
  const spans: Span[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === "'" || c === '"') {
      const end = quotedEnd(text, i)
      spans.push([i, end])
      i = end
      continue
    }
    const guid = matchAt(GUID, text, i)
    if (guid > i && !isWordChar(text[guid])) {
      spans.push([i, guid])
      i = guid
      continue
    }
    if (c >= '0' && c <= '9') {
      const end = matchAt(NUMERIC, text, i)
      spans.push([i, end])
      i = end
      continue
    }
    const word = matchAt(IDENTIFIER, text, i)
    if (word > i) {
      const name = text.slice(i, word)
      if (text[word] === "'") {
        // duration'P1D', binary'…', Namespace.Color'Red': the literal with its prefix.
        const end = quotedEnd(text, word)
        spans.push([i, end])
        i = end
      } else if (name.toLowerCase() === '$search' && text[word] === '=') {
        i = nestedSearch(text, word + 1, spans)
      } else if (name === 'search' && text[word] === '(') {
        i = nestedSearch(text, word + 1, spans)
      } else {
        // A name, a keyword, null, true, false: the query's shape.
        i = word
      }
      continue
    }
    i++
  }
  return spans
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{Nd}_]/u.test(c)
}

/** A $search inside $expand or search() inside $apply: its terms up to `;` or its closing `)`; answers where it ended. */
function nestedSearch(text: string, from: number, spans: Span[]): number {
  let depth = 0
  let end = from
  for (; end < text.length; end++) {
    const c = text[end]
    if (c === '"') end = quotedEnd(text, end) - 1
    else if (c === '(') depth++
    else if (c === ')' && depth-- === 0) break
    else if (c === ';' && depth === 0) break
  }
  for (const [start, stop] of searchSpans(text.slice(from, end))) spans.push([from + start, from + stop])
  return end
}

const SEARCH_OPERATORS = new Set(['AND', 'OR', 'NOT'])

/** Words and "phrases" of a $search; its operators and parentheses are not values. */
function searchSpans(text: string): Span[] {
  const spans: Span[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === ' ' || c === '\t' || c === '(' || c === ')') {
      i++
      continue
    }
    let end = i
    if (c === '"') end = quotedEnd(text, i)
    else while (end < text.length && !' \t()"'.includes(text[end])) end++
    if (!SEARCH_OPERATORS.has(text.slice(i, end))) spans.push([i, end])
    i = end
  }
  return spans
}

/** Quoted text anywhere in a path, and the value of each `name=value` inside parentheses. */
function pathSpans(text: string): Span[] {
  const spans: Span[] = []
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "'" || c === '"') {
      const end = quotedEnd(text, i)
      spans.push([i, end])
      i = end - 1
    } else if (c === '(') {
      depth++
    } else if (c === ')') {
      depth = Math.max(0, depth - 1)
    } else if (c === '=' && depth > 0 && text[i + 1] !== '@') {
      // A parameter alias (`before=@b`) is a name: its value is in the query.
      let end = i + 1
      while (end < text.length && text[end] !== ',' && text[end] !== ')') end = text[end] === "'" ? quotedEnd(text, end) : end + 1
      spans.push([i + 1, end])
      i = end - 1
    }
  }
  return spans
}

function redactPath(path: string): string {
  return redact(path, pathSpans)
}

// ── the values of a URL, for messages ──────────────────────────────────────────────────────

interface UrlValues {
  /** Each value's text, decoded; a quoted one also without its quotes and with '' undoubled. */
  readonly texts: string[]
  /** Each option's decoded text with its spans: what a syntax error may quote a window of. */
  readonly options: { readonly text: string; readonly spans: readonly Span[] }[]
}

function valuesOf(url: string): UrlValues {
  const texts: string[] = []
  const options: { text: string; spans: readonly Span[] }[] = []
  const collect = (text: string, spans: readonly Span[]) => {
    options.push({ text, spans })
    for (const [start, end] of spans) {
      const value = text.slice(start, end)
      texts.push(value)
      // As a syntax error names a long token: its first 40 characters (odata/parser/lexer.ts describe).
      if (value.length > 40) texts.push(value.slice(0, 40))
      const quote = value.search(/['"]/)
      if (quote >= 0) {
        const inner = value.slice(quote + 1, value.endsWith(value[quote]) && value.length > quote + 1 ? -1 : undefined)
        texts.push(inner, inner.replaceAll("''", "'"))
      }
    }
  }
  const query = url.indexOf('?')
  const path = decoded(query < 0 ? url : url.slice(0, query))
  collect(path, pathSpans(path))
  if (query >= 0) {
    for (const option of url.slice(query + 1).split('&')) {
      const equals = option.indexOf('=')
      if (equals < 0) continue
      const system = systemName(decoded(option.slice(0, equals)))
      const value = decoded(option.slice(equals + 1))
      if (value === '' || (system !== undefined && KEPT.get(system)?.test(value))) continue
      if (system !== undefined && EXPRESSIONS.has(system)) collect(value, expressionSpans(value))
      else if (system === 'search') collect(value, searchSpans(value))
      else collect(value, [[0, value.length]])
    }
  }
  return { texts: texts.filter((text) => text.length > 0), options }
}

/**
 * A parse error's quote of an option: the whole text, or a window of it (`…` at a cut end,
 * parse-errors.ts excerpt). Shown as loggedUrl shows the option; a text not found among the
 * URL's options is read as an expression of its own.
 */
function redactedExcerpt(excerpt: string, options: UrlValues['options']): string {
  const head = excerpt.startsWith('…') ? '…' : ''
  const tail = excerpt.endsWith('…') && excerpt.length > head.length ? '…' : ''
  const core = excerpt.slice(head.length, excerpt.length - tail.length)
  for (const { text, spans } of options) {
    const at = text.indexOf(core)
    if (at >= 0) return `${head}${redactWindow(text, spans, at, at + core.length)}${tail}`
  }
  return redact(excerpt, expressionSpans)
}
