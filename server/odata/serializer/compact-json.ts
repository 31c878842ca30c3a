// PostgreSQL writes the JSON it builds (json_build_object, json_agg) with a space around each
// key's colon and after each comma: `{"Name" : "Ada", "Country" : "GB"}`. Every other answer of
// ours is compact (JSON.stringify), so the bodies PostgreSQL builds are made compact too, by
// dropping the spaces between tokens; strings (quoted, escapes included) are kept as they are.
// A loop over the characters: about a third faster than the same with a regular expression,
// and several times cheaper than JSON.parse with JSON.stringify (which would also rewrite
// numbers: 9.00 → 9).

const SPACE = 32
const NEWLINE = 10
const QUOTE = 34
const BACKSLASH = 92

export function compactJson(text: string): string {
  let compact = ''
  let from = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === SPACE || c === NEWLINE) {
      compact += text.slice(from, i)
      from = i + 1
    }
  }
  return from === 0 ? text : compact + text.slice(from)
}
