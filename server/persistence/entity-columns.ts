// The stored columns of an entity and the conversions between a row and the values the unit
// of work holds. Values are kept as rules read them (decimals as numbers, dates as
// 'YYYY-MM-DD', date-times as ISO strings in UTC, a reference as its target's Guid), so
// change detection, rules and writes all compare and send one form.

import type { EntityModel } from '../model/model.ts'
import { VERSION_COLUMN } from '../model/model.ts'
import type { PropertyCipher } from '../tenancy/property-encryption.ts'
import { columnType } from './entity-schemas.ts'
import { quoteIdentifier as quote } from './sql.ts'

export interface Column {
  /** The property holding the value (a reference holds its target's key). */
  readonly property: string
  readonly column: string
  /** The SQL type its values are cast to on write. */
  readonly sqlType: string
  readonly kind: 'scalar' | 'reference'
  readonly encrypted: boolean
  readonly dateTime: boolean
}

/**
 * A row's xmin, selected or returned beside its columns (row-cache.ts, entity-tag.ts say why).
 * Named as the system column, so a write's step returning it reads as the table would.
 */
export const XMIN = 'xmin'

const columnsByEntity = new WeakMap<EntityModel, readonly Column[]>()

/** The entity's stored columns, the row version excluded; computed once per model. */
export function columnsOf(entity: EntityModel): readonly Column[] {
  let columns = columnsByEntity.get(entity)
  if (!columns) {
    const list: Column[] = []
    for (const property of entity.properties.values()) {
      if (property.kind === 'reference') {
        list.push({ property: property.name, column: property.column, sqlType: 'uuid', kind: 'reference', encrypted: false, dateTime: false })
      } else if (property.kind === 'scalar' && property.column && !property.foreignKeyOf) {
        const encrypted = property.decl.encrypted === true
        list.push({
          property: property.name,
          column: property.column,
          sqlType: columnType(property),
          kind: 'scalar',
          encrypted,
          dateTime: property.type === 'DateTimeOffset',
        })
      }
    }
    columnsByEntity.set(entity, (columns = list))
  }
  return columns
}

const selectLists = new WeakMap<EntityModel, Map<string, string>>()

/** `t."Guid", t."Number", t."Customer_Guid", …, t."_Version"`: what a load selects (built once). */
export function selectList(entity: EntityModel, alias: string): string {
  let byAlias = selectLists.get(entity)
  if (!byAlias) selectLists.set(entity, (byAlias = new Map()))
  let list = byAlias.get(alias)
  if (!list) {
    list = [...columnsOf(entity).map((c) => `${alias}.${quote(c.column)}`), `${alias}.${quote(VERSION_COLUMN)}`].join(', ')
    byAlias.set(alias, list)
  }
  return list
}

/** A row loaded as JSON (to_json of the select list) → the entity's values and row version. */
export function decodeRow(entity: EntityModel, row: Record<string, unknown>, cipher: PropertyCipher | undefined): { values: Record<string, unknown>; version: number } {
  const values: Record<string, unknown> = {}
  for (const column of columnsOf(entity)) {
    let value: unknown = row[column.column] ?? null
    if (column.encrypted) value = decrypter(cipher).decrypt(value)
    else if (column.dateTime && typeof value === 'string') value = new Date(value).toISOString()
    values[column.property] = value
  }
  return { values, version: Number(row[VERSION_COLUMN]) }
}

/** A value as sent to PostgreSQL. */
export function encodeValue(column: Column, value: unknown, cipher: PropertyCipher | undefined): unknown {
  if (value === undefined) return null
  return column.encrypted ? decrypter(cipher).encrypt(value) : value
}

function decrypter(cipher: PropertyCipher | undefined): PropertyCipher {
  if (!cipher) throw new Error('this database was opened without its EncryptionKey')
  return cipher
}
