// What one read statement is built with: its parameters (the one collector,
// persistence/sql-parameters.ts) and its table aliases. Values always go through param() (a
// placeholder with an explicit cast), identifiers only through ident(), and identifiers only
// ever come from the model.

import { SqlParameters } from '../../persistence/sql-parameters.ts'
import type { Range, ValueType } from '../semantic/bound.ts'
import type { ScalarProperty } from '../../model/model.ts'
import { DEFAULT_FORMAT, type JsonFormat } from '../handlers/negotiate.ts'
import { durationJson } from './compile-temporal.ts'

export interface CompiledQuery {
  readonly sql: string
  readonly params: readonly unknown[]
}

const CAST: Record<ValueType, string> = {
  string: 'text',
  int: 'int',
  decimal: 'numeric',
  double: 'float8',
  boolean: 'boolean',
  date: 'date',
  dateTimeOffset: 'timestamptz',
  timeOfDay: 'time',
  guid: 'uuid',
  duration: 'interval',
  null: 'text',
}

export function sqlType(type: ValueType): string {
  return CAST[type]
}

export { quoteIdentifier as ident } from '../../persistence/sql.ts'

/**
 * A value as the JSON body writes it. Timestamps are written in UTC with a Z, whatever the
 * session's time zone, with the milliseconds that $metadata declares (Precision 3); durations
 * as ISO 8601 (P1DT2H).
 */
export function jsonValue(sql: string, type: ValueType): string {
  if (type === 'duration') return durationJson(sql)
  return type === 'dateTimeOffset' ? `to_char(${sql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` : sql
}

/** A string literal for names that come from the model (JSON keys), never from a request. */
export function modelString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

/**
 * How the JSON a statement builds is written (odata.metadata, IEEE754Compatible), and the
 * names full metadata writes: a schema name qualified (an entity type, a method: `entityctl.Order`),
 * a property's public name and the qualified type $metadata declares for it (`Edm.Decimal`,
 * `entityctl.OrderStatus`).
 */
export interface JsonOutput {
  readonly format: JsonFormat
  qualified(name: string): string
  publicName(name: string): string
  propertyType(property: ScalarProperty): string
}

const MINIMAL: JsonOutput = { format: DEFAULT_FORMAT, qualified: (name) => name, publicName: (name) => name, propertyType: () => 'Edm.String' }

export class SqlBuilder {
  readonly #parameters: SqlParameters
  readonly #aliases = new Map<number, string>()
  readonly #keySlots: number[] = []
  #joinCounter = 0
  readonly json: JsonOutput

  /** `parameters`: the collector of a statement this read is part of (a write's, for its reply). */
  constructor(json: JsonOutput = MINIMAL, parameters = new SqlParameters()) {
    this.json = json
    this.#parameters = parameters
  }

  get params(): unknown[] {
    return this.#parameters.values
  }

  /** Where each key of the resource path went: keySlots[i] is the index in `params` of path key i. */
  get keySlots(): readonly number[] {
    return this.#keySlots
  }

  param(value: unknown, type: ValueType): string {
    return this.#parameters.add(value, CAST[type])
  }

  /** A parameter whose type PostgreSQL infers from its use (arrays, text in known places). */
  rawParam(value: unknown): string {
    return this.#parameters.add(value)
  }

  /**
   * Key number `index` of the resource path (`Orders(<key>)/Lines`): a parameter whose place
   * is remembered, so a statement of the same shape can be run again for other keys
   * (plan/read-plan-cache.ts).
   */
  pathKey(key: string, index: number): string {
    const placeholder = this.#parameters.add(key, 'uuid')
    this.#keySlots[index] = this.#parameters.count - 1
    return placeholder
  }

  alias(range: Range): string {
    let alias = this.#aliases.get(range.id)
    if (!alias) this.#aliases.set(range.id, (alias = `t${range.id}`))
    return alias
  }

  /** A fresh alias for a joined table. */
  joinAlias(): string {
    return `j${this.#joinCounter++}`
  }
}
