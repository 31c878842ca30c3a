// Date and duration arithmetic as SQL (binder: semantic/bind-temporal.ts). A duration is an
// interval of days and seconds (never months); a DateTimeOffset moves in UTC, whatever the
// session's time zone, so a day is always 24 hours:
//   LastLogin add duration'P1D'   →  ((t0."LastLogin" at time zone 'UTC') + $1::interval) at time zone 'UTC'
//   HireDate sub duration'PT1H'   →  (t0."HireDate" - $1::interval)::date   (midnight minus an hour: the day before)
//   HireDate sub 2020-01-01       →  make_interval(days => t0."HireDate" - $1::date)
//   LastLogin sub now()           →  (t0."LastLogin" - now())

import type { ValueType } from '../semantic/bound.ts'

/** `left op right` (add or sub) when it involves a date or a duration; undefined for numbers. */
export function compileTemporal(op: 'add' | 'sub', types: readonly [ValueType, ValueType], left: string, right: string): string | undefined {
  const sign = op === 'add' ? '+' : '-'
  const [l, r] = types
  if (l === 'dateTimeOffset' && r === 'duration') return `(((${left}) at time zone 'UTC') ${sign} ${right}) at time zone 'UTC'`
  // URL Conventions 4.01 §5.1.1.2.1: the date at midnight, the duration added, the time dropped.
  if (l === 'date' && r === 'duration') return `(${left} ${sign} ${right})::date`
  if (l === 'date' && r === 'date') return `make_interval(days => ${left} - ${right})`
  if (r === 'duration' || (l === 'dateTimeOffset' && r === 'dateTimeOffset')) return `(${left} ${sign} ${right})`
  return undefined
}

/**
 * A duration literal (`-P1DT2H`, as the binder checked it) as PostgreSQL's interval input
 * reads it: ISO 8601 with designators, where a sign stands before each number: `P-1DT-2H`.
 */
export function intervalInput(duration: string): string {
  if (!duration.startsWith('-')) return duration
  return duration.slice(1).replace(/(\d+(?:\.\d+)?)([DHMS])/g, '-$1$2')
}

/**
 * A duration as OData JSON writes it, an xs:dayTimeDuration (`P1DT2H`, `-PT1.5S`, `PT0S`),
 * from its seconds, a day being 24 hours; null for null. Not the session's IntervalStyle:
 * iso_8601 writes '-1 day -2 hours' as P-1DT-2H, which no OData client reads. No subquery
 * holds the value once: PostgreSQL refuses one over a grouped expression ($apply groupby),
 * so the value is written once per part, each part an empty string when zero:
 *   left('-', (s < 0)::int) || 'P' || coalesce(nullif(<days>D || coalesce('T' || nullif(<h>H<m>M<s>S, ''), ''), ''), 'T0S')
 */
export function durationJson(sql: string): string {
  const seconds = `extract(epoch from ${sql})`
  const part = (value: string, unit: string) => `coalesce(nullif(trim_scale(${value}), 0)::text || '${unit}', '')`
  const abs = `abs(${seconds})`
  const days = part(`floor(${abs} / 86400)`, 'D')
  const time = [part(`floor(mod(${abs}, 86400) / 3600)`, 'H'), part(`floor(mod(${abs}, 3600) / 60)`, 'M'), part(`mod(${abs}, 60)`, 'S')].join(' || ')
  // '-' when negative, '' when not, null for null: the whole is null then.
  const sign = `left('-', (${seconds} < 0)::int)`
  return `(${sign} || 'P' || coalesce(nullif(${days} || coalesce('T' || nullif(${time}, ''), ''), ''), 'T0S'))`
}
