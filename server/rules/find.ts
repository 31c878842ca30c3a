// `find` for rules and methods: entities of a type matching a filter
// ({ Status: 'Open', OrderDate: { $lt: before } }, persistence/where.ts), as views inside the
// same unit of work, so a method sees what the request has changed so far.

import { RequestError } from '../errors.ts'
import type { UnitOfWork } from '../persistence/unit-of-work.ts'
import type { EntityView, ViewScope } from './entity-view.ts'

export async function findViews(unit: UnitOfWork, scope: ViewScope, entity: string, where: Record<string, unknown> = {}): Promise<EntityView[]> {
  const meta = unit.model.entities.get(entity)
  if (!meta) throw RequestError.invalid(`find: unknown entity '${entity}'`)
  return (await unit.find(meta, where)).map((entry) => scope.view(entry))
}
