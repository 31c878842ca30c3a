// Sums kept by moving them (sumOf in the plugin API). A write that changes members of a
// collection moves the parent's stored sum by what it changed, the value each member has now
// less the value it was stored with, instead of reading every member and adding them up: a
// line's new quantity costs its order's row, not the order's other lines. Concurrent writers
// still meet on the parent's row, which every such write writes with the version it read.

import type { CollectionProperty, ScalarProperty } from '../model/model.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'
import { toRuleValue } from './values.ts'

/**
 * The sum `name` of `parent` (a sumOf of `property` over `collection`) moved by the unit's
 * changes; undefined when it must be computed from every member: a parent that is new or not
 * stored with a sum, or a member known only by its key (bound to the parent, values unread).
 */
export function movedSum(unit: UnitOfWork, parent: Entry, name: string, sum: { readonly collection: string; readonly property: string }): number | undefined {
  const total = parent.entity.properties.get(name) as ScalarProperty
  const stored = parent.state === 'loaded' ? toRuleValue(total, parent.original?.[name]) : undefined
  if (typeof stored !== 'number') return undefined
  const collection = parent.entity.properties.get(sum.collection) as CollectionProperty
  const inverse = collection.inverse.name
  const summed = collection.target.properties.get(sum.property) as ScalarProperty
  const valueIn = (values: Readonly<Record<string, unknown>>) => Number(toRuleValue(summed, values[sum.property]) ?? 0)
  let moved = stored
  for (const member of unit.entriesOf(collection.target)) {
    // Gone: removed by an earlier staged step, which moved the sum already.
    if (member.state === 'gone') continue
    if (member.state === 'stub') {
      if (member.values[inverse] === parent.key) return undefined
      continue
    }
    if (!member.removed && member.values[inverse] === parent.key) moved += valueIn(member.values)
    if (member.state === 'loaded' && member.original?.[inverse] === parent.key) moved -= valueIn(member.original)
  }
  return moved
}
