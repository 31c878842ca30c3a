// The MikroORM instance migrations compare the plugins' entity schemas with a database
// through (tenancy/migrate.ts): opened for one migration and closed after it, never on the
// request path, whose tenants have a plain pg pool (tenant-database.ts).

import { MikroORM } from '@mikro-orm/postgresql'
import type { Model } from '../model/model.ts'
import { entitySchemas } from '../persistence/entity-schemas.ts'

/** A MikroORM instance on the database at `url` with one connection; close it when done. */
export function openSchemaOrm(url: string, model: Model): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: url,
    entities: entitySchemas(model),
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: 1 },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    ensureDatabase: false,
    // Internal tables (_Pat, _Workflow, …) and their triggers belong to their subsystems'
    // DDL (persistence/internal-tables.ts); the schema diff must not touch them.
    schemaGenerator: { skipTables: [/^_/], ignoreTriggers: true },
  })
}
