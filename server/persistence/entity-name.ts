// MikroORM's types expect entity classes; ours are declared at run time by plugins and
// addressed by name. One cast, here, instead of one at every call.

import type { EntityName } from '@mikro-orm/core'

export type EntityRecord = Record<string, any>

export function byName(name: string): EntityName<EntityRecord> {
  return name as unknown as EntityName<EntityRecord>
}
