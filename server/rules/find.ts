// `find` for rules and methods: entities of a type matching a MikroORM-style filter
// ({ Status: 'Open', OrderDate: { $lt: before } }), as views inside the same unit of work,
// so a method sees what the request has changed so far.

import type { EntityManager } from '@mikro-orm/core'
import { RequestError } from '../errors.ts'
import type { EntityView, ViewScope } from './entity-view.ts'
import { byName } from '../persistence/entity-name.ts'

export async function findViews(
  em: EntityManager,
  scope: ViewScope,
  entity: string,
  where: Record<string, unknown> = {},
): Promise<EntityView[]> {
  if (!scope.model.entities.has(entity)) throw RequestError.invalid(`find: unknown entity '${entity}'`)
  const rows = await em.find(byName(entity), where as never, { orderBy: { Guid: 'asc' } as never })
  return rows.map((row) => scope.view(row))
}
