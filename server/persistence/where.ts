// The filters of `find` in rules and methods, MongoDB-style as plugins write them:
//   { Status: 'Open', OrderDate: { $lt: before }, Customer: customer.Guid, $or: [...] }
// compiled to parameterised SQL for the stored rows, and evaluated on the unit of work's
// own entities, so a search sees what the unit has changed but not written yet.

import { RequestError } from '../errors.ts'
import type { EntityModel } from '../model/model.ts'
import { KEY } from '../model/model.ts'
import { quoteIdentifier as quote } from './sql.ts'
import type { SqlParameters } from './sql-parameters.ts'

export type Where = Readonly<Record<string, unknown>>

const COMPARISONS = { $eq: '=', $ne: '<>', $lt: '<', $lte: '<=', $gt: '>', $gte: '>=' } as const
type Comparison = keyof typeof COMPARISONS

/**
 * SQL for `where` on `alias`, its values collected in `params`:
 *   { Status: 'Open', Total: { $gt: 100 } }  →  t."Status" = $1 and t."Total" > $2
 */
export function whereSql(entity: EntityModel, where: Where, alias: string, params: SqlParameters): string {
  const parts: string[] = []
  for (const [name, condition] of Object.entries(where)) {
    if (name === '$and' || name === '$or') {
      const list = conditionList(name, condition).map((item) => `(${whereSql(entity, item, alias, params)})`)
      parts.push(list.length === 0 ? (name === '$and' ? 'true' : 'false') : list.join(name === '$and' ? ' and ' : ' or '))
      continue
    }
    const column = `${alias}.${quote(stored(entity, name).column)}`
    for (const [operator, operand] of operations(entity, name, condition)) {
      if (operator === '$in' || operator === '$nin') {
        parts.push(`${operator === '$in' ? '' : 'not '}${column} = any(${params.add((operand as unknown[]).map(normalised))})`)
      } else if (operand === null) {
        parts.push(`${column} is ${operator === '$ne' ? 'not ' : ''}null`)
      } else {
        parts.push(`${column} ${COMPARISONS[operator]} ${params.add(normalised(operand))}`)
      }
    }
  }
  return parts.length === 0 ? 'true' : parts.join(' and ')
}

/** Whether values held by the unit of work satisfy `where`, with SQL's meaning of each operator. */
export function matches(entity: EntityModel, where: Where, values: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(where).every(([name, condition]) => {
    if (name === '$and') return conditionList(name, condition).every((item) => matches(entity, item, values))
    if (name === '$or') return conditionList(name, condition).some((item) => matches(entity, item, values))
    const value = values[stored(entity, name).valueName] ?? null
    return operations(entity, name, condition).every(([operator, operand]) => {
      if (operator === '$in' || operator === '$nin') {
        return value !== null && (operand as unknown[]).some((item) => compare(value, item) === 0) === (operator === '$in')
      }
      if (operand === null) return operator === '$ne' ? value !== null : value === null
      if (value === null) return false
      const order = compare(value, operand)
      switch (operator) {
        case '$eq': return order === 0
        case '$ne': return order !== 0
        case '$lt': return order < 0
        case '$lte': return order <= 0
        case '$gt': return order > 0
        case '$gte': return order >= 0
      }
    })
  })
}

function operations(entity: EntityModel, name: string, condition: unknown): [Comparison | '$in' | '$nin', unknown][] {
  if (!isOperatorObject(condition)) return [['$eq', condition]]
  return Object.entries(condition).map(([operator, operand]) => {
    if (operator === '$in' || operator === '$nin') {
      if (!Array.isArray(operand)) throw RequestError.invalid(`find: ${entity.name}.${name} ${operator} expects an array`)
      return [operator, operand]
    }
    if (!(operator in COMPARISONS)) throw RequestError.invalid(`find: unknown operator ${operator} on ${entity.name}.${name}; use ${[...Object.keys(COMPARISONS), '$in', '$nin'].join(', ')}`)
    return [operator as Comparison, operand]
  })
}

function conditionList(name: string, condition: unknown): Where[] {
  if (!Array.isArray(condition)) throw RequestError.invalid(`find: ${name} expects an array of conditions`)
  return condition as Where[]
}

/** The column of a property, and the name the unit holds its value under (a foreign key's is its reference's). */
function stored(entity: EntityModel, name: string): { column: string; valueName: string } {
  const property = entity.properties.get(name)
  if (property?.kind === 'reference') return { column: property.column, valueName: property.name }
  if (property?.kind !== 'scalar' || !property.column) throw RequestError.invalid(`find: ${entity.name} has no stored property '${name}'`)
  if (property.decl.encrypted) throw RequestError.invalid(`find: ${entity.name}.${name} is encrypted and cannot be searched`)
  return { column: property.column, valueName: property.foreignKeyOf?.name ?? property.name }
}

/** Numbers numerically, everything else as text (ISO dates and times order as text). */
function compare(value: unknown, operand: unknown): number {
  const other = normalised(operand)
  if (typeof value === 'number') return value - Number(other)
  const a = String(value)
  const b = String(other)
  return a < b ? -1 : a > b ? 1 : 0
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && Object.keys(value).some((k) => k.startsWith('$'))
}

/** A reference given as an entity (a view, `{ Guid }`) is its key; dates compare as the unit holds them. */
function normalised(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'object' && value !== null && KEY in value) return (value as Record<string, unknown>)[KEY]
  return value
}
