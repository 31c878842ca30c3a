// Model → MikroORM EntitySchemas: one per entity, tables and columns named as the model
// names them (table = entity name, column = property name, reference = `<Name>_Guid`). MikroORM
// compares them with the database to plan migrations; the read path's SQL compiler and the
// unit of work use the same names.

import { EntitySchema, type EntityProperty } from '@mikro-orm/core'
import type { EntityModel, Model, ScalarProperty } from '../model/model.ts'
import { indexKey, KEY, VERSION_COLUMN } from '../model/model.ts'

const COLUMN_TYPE: Record<ScalarProperty['type'], (p: ScalarProperty) => string> = {
  Text: textType,
  ProperNoun: textType,
  MultilineText: textType,
  Email: textType,
  Enum: textType,
  Integer: () => 'int',
  Decimal: (p) => `numeric(${p.decl.precision},${p.decl.scale})`,
  Double: () => 'double precision',
  Boolean: () => 'boolean',
  Date: () => 'date',
  DateTimeOffset: () => 'timestamptz',
  TimeOfDay: () => 'time',
  Guid: () => 'uuid',
}

function textType(property: ScalarProperty): string {
  return property.decl.maxLength === undefined ? 'text' : `varchar(${property.decl.maxLength})`
}

/**
 * The column's SQL type. An encrypted property of any type is stored as its ciphertext, in an
 * unbounded text column; its length rule is checked on the plaintext by the rules engine.
 */
export function columnType(property: ScalarProperty): string {
  return property.decl.encrypted ? 'text' : COLUMN_TYPE[property.type](property)
}

export function entitySchemas(model: Model): EntitySchema[] {
  return [...model.entities.values()].map(entitySchema)
}

function entitySchema(entity: EntityModel): EntitySchema {
  const properties: Record<string, Partial<EntityProperty>> = {}
  for (const property of entity.properties.values()) {
    if (property.kind === 'scalar') {
      if (!property.column || property.foreignKeyOf) continue
      const isText = columnType(property).startsWith('varchar') || columnType(property) === 'text'
      properties[property.name] = {
        name: property.name,
        fieldName: property.column,
        columnType: columnType(property),
        // Strings compare and sort by code point whatever the database's default collation;
        // declared as a collation (not in the type), so the schema diff of a database whose
        // default is another collation does not see every text column as changed.
        ...(isText && !property.decl.encrypted ? { collation: 'C' } : {}),
        type: property.name === KEY ? 'uuid' : 'unknown',
        primary: property.name === KEY,
        nullable: property.name !== KEY && !property.decl.required,
        unique: false,
      } as Partial<EntityProperty>
    } else if (property.kind === 'reference') {
      properties[property.name] = {
        kind: 'm:1',
        entity: () => property.target.name,
        fieldName: property.column,
        nullable: !property.required,
        deleteRule: property.onDelete === 'setNull' ? 'set null' : property.onDelete === 'cascade' ? 'cascade' : 'no action',
        updateRule: 'no action',
        index: true,
      } as unknown as Partial<EntityProperty>
    } else {
      properties[property.name] = {
        kind: '1:m',
        entity: () => property.target.name,
        mappedBy: property.inverse.name,
      } as unknown as Partial<EntityProperty>
    }
  }
  properties[VERSION_COLUMN] = { name: VERSION_COLUMN, fieldName: VERSION_COLUMN, type: 'integer', version: true } as Partial<EntityProperty>
  const uniques = entity.naturalKey.length > 0
    ? [{ name: `${entity.table}_natural_key`, properties: entity.naturalKey as string[] }]
    : []
  const indexes = entity.indexes.map((keys, i) => indexOptions(entity, `${entity.table}_index_${i + 1}`, keys))
  return new EntitySchema({
    name: entity.name,
    tableName: entity.table,
    properties: properties as never,
    uniques,
    indexes,
  })
}

/**
 * A declared index. Keys with a direction (`'OrderDate desc'`) are columns sorted as `$orderby`
 * sorts them, nulls first ascending and last descending (compile-read.ts), so the index
 * delivers that order; an index of plain names stays a list of properties, as it always was.
 */
function indexOptions(entity: EntityModel, name: string, keys: readonly string[]) {
  const parsed = keys.map((text) => indexKey(text)!)
  if (parsed.every((key) => !key.direction)) return { name, properties: parsed.map((key) => key.property) }
  const columns = parsed.map((key) => {
    const property = entity.properties.get(key.property)!
    const column = property.kind === 'collection' ? key.property : (property.column ?? key.property)
    if (!key.direction) return { name: column }
    return key.direction === 'desc' ? { name: column, sort: 'DESC' as const, nulls: 'LAST' as const } : { name: column, sort: 'ASC' as const, nulls: 'FIRST' as const }
  })
  return { name, columns }
}
