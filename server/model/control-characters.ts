// Names people type and read (user, role, responsibility and PAT names) are typed at a
// prompt or in a request, and shown in lists, trees and logs, where a line break, a NUL or a
// terminal escape cannot be typed, or is not seen, or changes what is shown around it.
// Every place that creates or renames one refuses it with the same words, and the messages
// that repeat one (or a tenant name), as typed or as stored, quote it with quotedName.

/** C0 and C1 controls and DEL: line breaks, tabs, NUL, ESC… (Unicode category Cc). */
const CONTROL_CHARACTER = /\p{Cc}/u

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text)
}

/** `A role name may not contain control characters (line breaks, tabs, escapes)`. */
export function noControlCharacters(what: string): string {
  return `${what} may not contain control characters (line breaks, tabs, escapes)`
}

/** DEL and the C1 controls (CSI among them), which JSON.stringify leaves as they are. */
const LEFT_BY_JSON = /[\u007f-\u009f]/g

/**
 * A name as a message repeats it: `'Sales'`; one with a control character, typed into a lookup
 * or stored before the names were checked, as a JSON string with every control escaped,
 * `"Red\u001b[31m"`, so that the terminal or log that shows the message does not run them.
 */
export function quotedName(name: string): string {
  if (!hasControlCharacter(name)) return `'${name}'`
  return JSON.stringify(name).replace(LEFT_BY_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
