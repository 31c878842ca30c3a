// Names people type and read (user, role, responsibility and PAT names) are typed at a
// prompt or in a request, and shown in lists, trees and logs, where a line break, a NUL or a
// terminal escape cannot be typed, or is not seen, or changes what is shown around it.
// Every place that creates or renames one refuses it with the same words.

/** C0 and C1 controls and DEL: line breaks, tabs, NUL, ESC… (Unicode category Cc). */
const CONTROL_CHARACTER = /\p{Cc}/u

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text)
}

/** `A role name may not contain control characters (line breaks, tabs, escapes)`. */
export function noControlCharacters(what: string): string {
  return `${what} may not contain control characters (line breaks, tabs, escapes)`
}
