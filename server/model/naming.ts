// Names as the public sees them. One policy serves the binder, the body reader, the
// serializer and $metadata, so ApiOptions:EnableLowerCamelCase is one switch.

/** Default entity set name: Order → Orders, Category → Categories, Address → Addresses. */
export function pluralize(name: string): string {
  if (/[^aeiou]y$/i.test(name)) return `${name.slice(0, -1)}ies`
  if (/(s|x|z|ch|sh)$/i.test(name)) return `${name}es`
  return `${name}s`
}

export interface NamingPolicy {
  /** Declared name → public name (property, set, method, parameter). */
  readonly toPublic: (declared: string) => string
  readonly lowerCamelCase: boolean
}

export function lowerCamel(name: string): string {
  // A leading acronym lowers as a block: "URLPath" → "urlPath", "Guid" → "guid".
  const match = /^[A-Z]+(?=[A-Z][a-z]|$)|^[A-Z]/.exec(name)
  if (!match) return name
  return match[0].toLowerCase() + name.slice(match[0].length)
}

export function namingPolicy(lowerCamelCase: boolean): NamingPolicy {
  return { lowerCamelCase, toPublic: lowerCamelCase ? lowerCamel : (name) => name }
}
