// Conversions of scalar values between the three places they live: JSON bodies (what a
// client sends), the unit of work (what a write holds and stores), and rule views (what plugin code
// reads). Checking a client value against its property's type is here too.

import type { ScalarProperty } from '../model/model.ts'
import { GUID_PATTERN } from '../persistence/guid.ts'
import { jsonExcerpt } from './json-excerpt.ts'

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,12})?)?$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,12})?)?(Z|[+-]\d{2}:\d{2})$/i
const INT32 = 2 ** 31

/** A decimal at its property's scale, rounded as PostgreSQL rounds it (arithmetic gives 0.30000000000000004). */
export function atScale(decl: { readonly scale?: number }, value: number): number {
  return Number(value.toFixed(decl.scale ?? 2))
}

/** The value a rule or method reads. */
export function toRuleValue(property: ScalarProperty, value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null
  switch (property.type) {
    case 'Decimal':
    case 'Double':
      return typeof value === 'string' ? Number(value) : value
    case 'Date':
      return value instanceof Date ? value.toISOString().slice(0, 10) : value
    case 'DateTimeOffset':
      return value instanceof Date ? value.toISOString() : value
    default:
      return value
  }
}

/**
 * Parses a client's JSON value for a property. Returns the value to store or a message
 * saying why it is not acceptable (the caller gathers them into one ValidationFailed).
 */
export function parseClientValue(property: Pick<ScalarProperty, 'type' | 'decl'>, value: unknown): { value: unknown } | { problem: string } {
  if (value === null) return { value: null }
  const type = property.type
  // An encrypted property's value is what the operator chose to keep out of sight: the message (which the log writes too) names its kind only.
  const wrong = (expected: string) => ({ problem: `expects ${expected}, not ${property.decl.encrypted ? `${kindOf(value)} (an encrypted property's value is not repeated)` : described(value)}` })
  switch (type) {
    case 'Text':
    case 'ProperNoun':
    case 'MultilineText':
    case 'Email':
    case 'Enum':
      return typeof value === 'string' ? { value } : wrong('a string')
    case 'Integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= -INT32 && value < INT32 ? { value } : wrong('an integer (32-bit)')
    case 'Decimal': {
      const number = typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
      if (typeof number !== 'number' || !Number.isFinite(number)) return wrong('a decimal number')
      const [whole, fraction = ''] = String(typeof value === 'string' ? value : number).replace('-', '').split('.')
      const { precision = 18, scale = 2 } = property.decl
      if (fraction.length > scale) return { problem: `allows at most ${scale} decimals` }
      if (whole.replace(/^0+/, '').length > precision - scale) return { problem: `allows at most ${precision - scale} digits before the decimal point` }
      // Decimals pass through the rules as JavaScript numbers, exact to 15 significant digits.
      // A string (IEEE754Compatible) with more would be stored rounded: refused instead.
      if (typeof value === 'string' && Math.abs(number).toFixed(fraction.length) !== `${whole.replace(/^0+(?=\d)/, '')}${fraction ? `.${fraction}` : ''}`) {
        return { problem: 'has more significant digits than are kept exactly (15)' }
      }
      return { value: number }
    }
    case 'Double':
      // 1e400 reads as Infinity: neither PostgreSQL's answer ('Infinity') nor a method's (null) writes it as OData would.
      return typeof value === 'number' && Number.isFinite(value) ? { value } : wrong('a finite number')
    case 'Boolean':
      return typeof value === 'boolean' ? { value } : wrong('true or false')
    case 'Date': {
      const match = typeof value === 'string' ? DATE.exec(value) : null
      if (!match || !isRealDate(Number(match[1]), Number(match[2]), Number(match[3]))) return wrong('a date YYYY-MM-DD')
      return { value }
    }
    case 'DateTimeOffset':
      return typeof value === 'string' && DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
        ? { value: new Date(value).toISOString() }
        : wrong('a date-time with offset, e.g. 2026-01-15T10:30:00Z')
    case 'TimeOfDay':
      return typeof value === 'string' && TIME.test(value) ? { value } : wrong('a time of day hh:mm:ss')
    case 'Guid':
      return typeof value === 'string' && GUID_PATTERN.test(value) ? { value: value.toLowerCase() } : wrong('a GUID')
  }
}

/** A client's value in a message. JSON reads a number beyond a double (1e400) as Infinity, which JSON.stringify writes as null. */
function described(value: unknown): string {
  if (Number.isNaN(value)) return 'NaN'
  if (typeof value === 'number' && !Number.isFinite(value)) return 'a number out of range (beyond ±1.8e308)'
  return jsonExcerpt(value)
}

/** What a value is, without what it holds: `a string`, `a number`. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return typeof value === 'boolean' ? 'a boolean' : `a ${typeof value}`
}

function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

export function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === ''
}
