// A value plugin code gave, as a message to the integrator shows it: its JSON, shortened where
// a member or element ends (or a word, inside one long string) and marked with an ellipsis,
// rather than cut off mid-word.

const MAX = 60

/** `{"Name":"Research and development","Code":"RND",…` for a value whose JSON is longer than 60 characters. */
export function jsonExcerpt(value: unknown): string {
  const json = String(JSON.stringify(value))
  if (json.length <= MAX) return json
  const head = json.slice(0, MAX)
  // After the last comma that ends a member or element; else before the last space; else where it falls.
  const comma = head.lastIndexOf(',')
  if (comma >= MAX / 2) return `${head.slice(0, comma + 1)}…`
  const space = head.lastIndexOf(' ')
  return `${space >= MAX / 2 ? head.slice(0, space) : head}…`
}
