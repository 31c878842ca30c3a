// Binds date and duration arithmetic (OData 4.01 URL Conventions §5.1.1.2): the operand
// types each operator takes with dates and durations, and what it gives.
//   LastLogin sub duration'P30D'  →  binary(sub, property(LastLogin), literal(duration 'P30D')): Edm.DateTimeOffset
//   HireDate sub 2020-01-01        →  binary(sub, property(HireDate), literal(date)): Edm.Duration

import { QueryError } from '../../errors.ts'
import { aType, EDM_TYPE_OF, type BoundExpression, type BoundLiteral, type ValueType } from './bound.ts'

/** Each form §5.1.1.2.1 (add) and §5.1.1.2.2 (sub) define: `left op right` → result. */
const FORMS: Readonly<Record<'add' | 'sub', readonly (readonly [ValueType, ValueType, ValueType])[]>> = {
  add: [
    ['dateTimeOffset', 'duration', 'dateTimeOffset'],
    ['date', 'duration', 'date'],
    ['duration', 'duration', 'duration'],
  ],
  sub: [
    ['dateTimeOffset', 'duration', 'dateTimeOffset'],
    ['date', 'duration', 'date'],
    ['duration', 'duration', 'duration'],
    ['dateTimeOffset', 'dateTimeOffset', 'duration'],
    ['date', 'date', 'duration'],
  ],
}

const TEMPORAL: ReadonlySet<ValueType> = new Set(['date', 'dateTimeOffset', 'duration'])

/**
 * `left op right` when an operand is a date, a time or a duration; undefined when none is, for
 * the numbers' rules. A string literal meeting a date or a duration is read as a duration
 * (OData 4.01 lets `duration'P1D'` drop its prefix). Only add and sub take durations: mul and
 * div of a duration are not defined in 4.01 Part 2 (§5.1.1.2.4, §5.1.1.2.5).
 */
export function bindTemporal(op: string, left: BoundExpression, right: BoundExpression, option: string): BoundExpression | undefined {
  if (!TEMPORAL.has(left.type) && !TEMPORAL.has(right.type)) return undefined
  if (op !== 'add' && op !== 'sub') {
    throw QueryError.invalid(`In ${option}, '${op}' takes numbers, not ${aType(left.type)} and ${aType(right.type)}: with dates and durations only add, sub and '-' are defined (OData URL Conventions 4.01 §5.1.1.2).`)
  }
  const l = asDuration(left, right, option)
  const r = asDuration(right, left, option)
  const form = FORMS[op].find(([a, b]) => a === l.type && b === r.type)
  if (!form) {
    const forms = FORMS[op].map(([a, b, result]) => `${EDM_TYPE_OF[a]} ${op} ${EDM_TYPE_OF[b]} (${EDM_TYPE_OF[result]})`).join(', ')
    throw QueryError.invalid(`In ${option}, '${op}' cannot take ${aType(l.type)} and ${aType(r.type)}; with dates and durations it takes ${forms}.`)
  }
  return { kind: 'binary', op, left: l, right: r, type: form[2] }
}

/** `'P1D'` beside a date, a time or a duration: the duration it writes. */
function asDuration(node: BoundExpression, other: BoundExpression, option: string): BoundExpression {
  if (node.kind !== 'literal' || node.type !== 'string' || !TEMPORAL.has(other.type)) return node
  return durationLiteral(String(node.value), option)
}

// `[-]P[nD][T[nH][nM][n[.n]S]]`, as the lexer checked it (parser/lexer.ts, isDuration).
const DURATION = /^(-?)P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.\d+)?S)?)?$/i

/**
 * A duration literal as the compiler passes it on, upper-case: `-P1DT2H`. Its days, hours,
 * minutes and whole seconds have at most 9 digits each (leading zeros aside), so that
 * PostgreSQL's interval holds every one (2^31 days, 2^63 microseconds): a longer one is a 400
 * naming it, not an overflow in the database. Digits past the microsecond are rounded.
 */
export function durationLiteral(text: string, option: string): BoundLiteral {
  const match = DURATION.exec(text)
  const fail = (why: string) => QueryError.invalid(`In ${option}, duration'${text}' ${why}`)
  if (!match || !/\d/.test(text)) {
    throw fail('is not a duration: OData durations have days, hours, minutes and seconds (no years or months), as in P1DT2H30M or -PT90S.')
  }
  const [, , days, hours, minutes, seconds] = match
  if ([days, hours, minutes, seconds].some((n) => n !== undefined && n.replace(/^0+/, '').length > 9)) {
    throw fail('is out of range: its days, hours, minutes and whole seconds have at most 9 digits each.')
  }
  return { kind: 'literal', type: 'duration', value: text.toUpperCase() }
}
