// Model → MikroORM EntitySchemas: one per entity, tables and columns named as the model
// names them (table = entity name, column = property name, reference = `<Name>_Guid`). MikroORM
// compares them with the database to plan migrations (migrations/schema-plan.ts); the read
// path's SQL compiler and the unit of work use the same names. Every table carries the comment
// MANAGED_COMMENT: what entityctl created, and may therefore drop, is marked in the database.

import { EntitySchema, type EntityProperty } from '@mikro-orm/core'
import { quoteIdentifier } from './sql.ts'
import type { EntityModel, Model, ScalarProperty } from '../model/model.ts'
import { indexKey, KEY, SEARCH_COLUMN, SEARCH_SEPARATORS, searchableProperties, VERSION_COLUMN } from '../model/model.ts'

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

/** The comment on every table and index entityctl manages; objects without it are the admin's. */
export const MANAGED_COMMENT = 'entityctl'

/**
 * Renames not carried out yet (migrations/schema-plan.ts): the schemas then use the old table
 * and column names, so that comparing them with the database finds every other change, and
 * the renames run after those.
 */
export interface PendingRenames {
  /** Declared table → its name in the database. */
  readonly tables: ReadonlyMap<string, string>
  /** Declared table → declared column → its name in the database. */
  readonly columns: ReadonlyMap<string, ReadonlyMap<string, string>>
}

const NO_RENAMES: PendingRenames = { tables: new Map(), columns: new Map() }

export function entitySchemas(model: Model, renames: PendingRenames = NO_RENAMES): EntitySchema[] {
  return [...model.entities.values()].map((entity) => entitySchema(entity, renames))
}

/** The names of the indexes entityctl makes for an entity: its key, natural key, declared indexes, references. */
export function managedIndexNames(entity: EntityModel): string[] {
  const names = [`${entity.table}_pkey`]
  if (entity.naturalKey.length > 0) names.push(`${entity.table}_natural_key`)
  entity.indexes.forEach((_, i) => names.push(`${entity.table}_index_${i + 1}`))
  if (searchableProperties(entity).length > 0) names.push(`${entity.table}_search`)
  for (const property of entity.properties.values()) {
    if (property.kind === 'reference') names.push(`${entity.table}_${property.column}_index`)
  }
  return names
}

function entitySchema(entity: EntityModel, renames: PendingRenames): EntitySchema {
  const properties: Record<string, Partial<EntityProperty>> = {}
  const columns = renames.columns.get(entity.table)
  const columnOf = (column: string) => columns?.get(column) ?? column
  const table = renames.tables.get(entity.table) ?? entity.table
  for (const property of entity.properties.values()) {
    if (property.kind === 'scalar') {
      if (!property.column || property.foreignKeyOf) continue
      const isText = columnType(property).startsWith('varchar') || columnType(property) === 'text'
      properties[property.name] = {
        name: property.name,
        fieldName: columnOf(property.column),
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
        fieldName: columnOf(property.column),
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
  const searchable = searchableProperties(entity)
  if (searchable.length > 0) properties[SEARCH_COLUMN] = searchColumn(searchable.map((property) => columnOf(property.column!)))
  const uniques = entity.naturalKey.length > 0
    ? [{ name: `${table}_natural_key`, properties: entity.naturalKey as string[] }]
    : []
  const indexes: (ReturnType<typeof indexOptions> & { type?: string })[] = entity.indexes.map((keys, i) => indexOptions(entity, `${table}_index_${i + 1}`, keys))
  if (searchable.length > 0) indexes.push({ name: `${table}_search`, properties: [SEARCH_COLUMN], type: 'gin' })
  return new EntitySchema({
    name: entity.name,
    tableName: table,
    comment: MANAGED_COMMENT,
    properties: properties as never,
    uniques,
    indexes,
  })
}

/**
 * The words of the searchable properties as one tsvector, kept by PostgreSQL (a stored
 * generated column) and indexed with GIN for $search. The 'simple' configuration lower-cases
 * words without stemming or stop words, whatever the language of the data, so a search finds
 * the words as written; words are split at SEARCH_SEPARATORS, in the data and in the query
 * (sql/compile-expression.ts) alike. `columns` are the names in the database: a pending rename's
 * old one, which PostgreSQL renames in the expression when it renames the column.
 */
function searchColumn(columns: readonly string[]): Partial<EntityProperty> {
  const text = columns.map((column) => `coalesce(${quoteIdentifier(column)}::text, '')`).join(` || ' ' || `)
  // Words are what the separators leave (an e-mail address is its parts), as in the query.
  const words = `regexp_replace(${text}, '${SEARCH_SEPARATORS}', ' ', 'g')`
  return {
    name: SEARCH_COLUMN,
    fieldName: SEARCH_COLUMN,
    columnType: 'tsvector',
    type: 'unknown',
    nullable: true,
    generated: `(to_tsvector('simple'::regconfig, ${words})) stored`,
  } as Partial<EntityProperty>
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
