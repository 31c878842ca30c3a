// `find` for rules and methods: entities of a type matching a filter
// ({ Status: 'Open', OrderDate: { $lt: before } }, persistence/where.ts), as views inside the
// same unit of work, so a method sees what the request has changed so far.

import { closestName } from '../errors.ts'
import type { UnitOfWork } from '../persistence/unit-of-work.ts'
import type { EntityView, ViewScope } from './entity-view.ts'

export async function findViews(unit: UnitOfWork, scope: ViewScope, entity: string, where: Record<string, unknown> = {}): Promise<EntityView[]> {
  const meta = unit.model.entities.get(entity)
  if (!meta) {
    // The plugin's mistake, not the client's: thrown plainly, so the rule or method that
    // called find is named in a PluginFailed (plugin-call.ts).
    const hint = closestName(entity, unit.model.entities.keys())
    throw new Error(`find('${entity}') names no entity${hint ? `; did you mean '${hint}'?` : ''}`)
  }
  const found = await unit.find(meta, where)
  // A filter on a sum reads it of every entity of the type the unit holds, matched or not.
  if (Object.keys(where).some((name) => meta.rules.computed.get(name)?.sumOf)) for (const entry of unit.entriesOf(meta)) scope.readSum(entry)
  return found.map((entry) => scope.view(entry))
}
