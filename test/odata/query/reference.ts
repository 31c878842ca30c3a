// The reference evaluation the query suite checks the service against: OData semantics
// written directly in JavaScript over the fixture objects (fixtures/dataset.ts), sharing no
// code with the parser, binder or SQL compiler. Strings compare as PostgreSQL's "C"
// collation does (by UTF-8 bytes); a comparison with null is false, `eq null` and `ne null`
// are the only tests that see a null (OData 4.01 URL Conventions 5.1.1.1).

type Value = string | number | boolean | null | undefined

export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/** Orders two non-null values of the same type. */
export function compare(a: Exclude<Value, null | undefined>, b: Exclude<Value, null | undefined>): number {
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b)
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return (a as number) - (b as number)
}

const isNull = (v: Value): v is null | undefined => v === null || v === undefined

export const eq = (a: Value, b: Value): boolean => (isNull(a) || isNull(b) ? isNull(a) && isNull(b) : compare(a, b) === 0)
export const ne = (a: Value, b: Value): boolean => !eq(a, b)
export const gt = (a: Value, b: Value): boolean => !isNull(a) && !isNull(b) && compare(a, b) > 0
export const ge = (a: Value, b: Value): boolean => !isNull(a) && !isNull(b) && compare(a, b) >= 0
export const lt = (a: Value, b: Value): boolean => !isNull(a) && !isNull(b) && compare(a, b) < 0
export const le = (a: Value, b: Value): boolean => !isNull(a) && !isNull(b) && compare(a, b) <= 0

/** Arithmetic and functions propagate null. */
export function lift<A extends unknown[], R>(f: (...args: A) => R): (...args: { [K in keyof A]: A[K] | null | undefined }) => R | null {
  return (...args) => (args.some((a) => a === null || a === undefined) ? null : f(...(args as A)))
}

export const fn = {
  contains: (s: string | null | undefined, t: string | null | undefined) => !isNull(s) && !isNull(t) && s.includes(t),
  startswith: (s: string | null | undefined, t: string | null | undefined) => !isNull(s) && !isNull(t) && s.startsWith(t),
  endswith: (s: string | null | undefined, t: string | null | undefined) => !isNull(s) && !isNull(t) && s.endsWith(t),
  length: lift((s: string) => [...s].length),
  indexof: lift((s: string, t: string) => [...s.slice(0, Math.max(0, s.indexOf(t)))].length - (s.includes(t) ? 0 : 1)),
  // A negative start counts from the end (4.01), never before the first character.
  substring: lift((s: string, start: number, length?: number) => {
    const chars = [...s]
    const from = start < 0 ? Math.max(chars.length + start, 0) : start
    return chars.slice(from, length === undefined ? undefined : from + length).join('')
  }),
  tolower: lift((s: string) => s.toLowerCase()),
  toupper: lift((s: string) => s.toUpperCase()),
  trim: lift((s: string) => s.replace(/^ +| +$/g, '')),
  concat: lift((a: string, b: string) => a + b),
  matchespattern: (s: string | null | undefined, pattern: string) => !isNull(s) && new RegExp(pattern, 'u').test(s),
  year: lift((d: string) => Number(d.slice(0, 4))),
  month: lift((d: string) => Number(d.slice(5, 7))),
  day: lift((d: string) => Number(d.slice(8, 10))),
  /** Of a DateTimeOffset (ISO text with Z) or a TimeOfDay (HH:MM:SS). */
  hour: lift((t: string) => Number(timePart(t).slice(0, 2))),
  minute: lift((t: string) => Number(timePart(t).slice(3, 5))),
  second: lift((t: string) => Number(timePart(t).slice(6, 8))),
  fractionalseconds: lift((t: string) => Number(`0${timePart(t).slice(8).replace('Z', '') || '.0'}`)),
  date: lift((t: string) => t.slice(0, 10)),
  time: lift((t: string) => timePart(t).replace('Z', '')),
  /** OData rounds half away from zero. */
  round: lift((x: number) => Math.sign(x) * Math.round(Math.abs(x))),
  floor: lift((x: number) => Math.floor(x)),
  ceiling: lift((x: number) => Math.ceil(x)),
}

function timePart(value: string): string {
  return value.length > 10 && value[10] === 'T' ? value.slice(11) : value
}

/** An enumeration orders by the position of its members (their value in $metadata). */
export function rank(members: readonly string[]): (value: string | null) => number | null {
  return (value) => (value === null ? null : members.indexOf(value) + 1)
}

export const LEVELS = rank(['Junior', 'Senior', 'Lead', 'Principal'])

type Key<T> = (row: T) => Value
export type SortKey<T> = Key<T> | [Key<T>, 'asc' | 'desc']

/**
 * The service's order: each key with nulls first ascending and last descending, then the
 * entity key (Guid), which the service appends for stable paging.
 */
export function sortRows<T extends { Guid: string }>(rows: readonly T[], ...keys: SortKey<T>[]): T[] {
  const normalized = keys.map((key) => (Array.isArray(key) ? key : ([key, 'asc'] as const)))
  return [...rows].sort((a, b) => {
    for (const [key, direction] of normalized) {
      const x = key(a)
      const y = key(b)
      const order = isNull(x) ? (isNull(y) ? 0 : -1) : isNull(y) ? 1 : compare(x, y)
      if (order !== 0) return direction === 'desc' ? -order : order
    }
    return compareText(a.Guid, b.Guid)
  })
}

/** `[{ Guid }]`, the body of a read without $select. */
export function keysOf(rows: readonly { Guid: string }[]): { Guid: string }[] {
  return rows.map((row) => ({ Guid: row.Guid }))
}

/** Picks properties, in the service's JSON encoding of their values. */
export function project<T extends object>(row: T, names: readonly (keyof T & string)[]): Record<string, unknown> {
  const out: Record<string, unknown> = { Guid: (row as { Guid: string }).Guid }
  for (const name of names) out[name] = wire((row as Record<string, unknown>)[name])
  return out
}

/** Values as the service writes them: a DateTimeOffset in UTC with milliseconds, as stored here. */
export function wire(value: unknown): unknown {
  return value
}

/** Drops `@odata.etag` everywhere (each row carries one), to compare data only. */
export function withoutEtags(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEtags)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([name]) => name !== '@odata.etag').map(([name, v]) => [name, withoutEtags(v)]))
  }
  return value
}
