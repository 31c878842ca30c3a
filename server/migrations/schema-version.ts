// The schema version a model asks for: a hash of everything a migration derives from it (tables,
// columns and their types, references, indexes, renames, responsibilities) and of the internal
// tables' DDL. Recorded in each tenant's `_Migration` journal when a migration is applied, it
// lets a start skip every tenant that is already current with one query, instead of booting
// MikroORM and comparing catalogs for each.

import { createHash } from 'node:crypto'
import type { Model } from '../model/model.ts'
import { columnType } from '../persistence/entity-schemas.ts'
import { INTERNAL_TABLES } from '../persistence/internal-tables.ts'

/**
 * Raised when what a migration does changes without the model changing (the planner's own
 * rules), so every tenant is planned once more. 2: the search column splits its words at
 * SEARCH_SEPARATORS (model.ts), keeping letters outside ASCII in their words.
 */
const PLANNER_REVISION = 2

export function schemaVersion(model: Model): string {
  const entities = [...model.entities.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((entity) => ({
      table: entity.table,
      renamedFrom: entity.renamedFrom ?? null,
      naturalKey: entity.naturalKey,
      indexes: entity.indexes,
      properties: [...entity.properties.values()]
        .filter((property) => property.kind !== 'collection')
        .map((property) =>
          property.kind === 'scalar'
            ? [property.name, property.column ?? null, columnType(property), property.decl.required, property.decl.renamedFrom ?? null]
            : [property.name, property.column, property.target.table, property.required, property.onDelete, property.decl.renamedFrom ?? null],
        ),
    }))
  const responsibilities = [...model.responsibilities.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((r) => [r.name, r.description ?? null, r.permissions])
  return createHash('sha256')
    .update(JSON.stringify({ revision: PLANNER_REVISION, entities, responsibilities, internal: INTERNAL_TABLES }))
    .digest('hex')
    .slice(0, 32)
}
