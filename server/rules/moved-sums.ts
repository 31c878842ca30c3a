// Sums kept by moving them (sumOf in the plugin API). A write that changes members of a
// collection moves the parent's stored sum by what it changed, the value each member has now
// less the value it was stored with, instead of reading every member and adding them up: a
// line's new quantity costs its order's row, not the order's other lines.
//
// Where no plugin code of the write read the sum (sumsMovedInSql), the write moves it in SQL,
// `"Total" = t."Total" + change`, without the version it read: writers of one order's lines
// wait for each other's row lock, as hand-written SQL does, instead of losing to each other
// and running again. Where plugin code read it (a validation, a default, a value computed
// from it), the write sets the sum it worked out over the version it read, so the code saw
// the sum that is stored, and concurrent writers meet on the parent's version.

import type { CollectionProperty, EntityModel, ScalarProperty } from '../model/model.ts'
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

const movedInSql = new WeakMap<EntityModel, ReadonlySet<string>>()

/**
 * The sums of `entity` a write may move in SQL by the change it made, whatever the stored sum
 * is by then, when no plugin code of the write read it (the views tell the unit of work,
 * entity-view.ts). What no view shows rules it out here: a validation of the entity (it is
 * given the entity as stored, `before`), a range the sum must keep, encryption (the database
 * cannot add it up).
 */
export function sumsMovedInSql(entity: EntityModel): ReadonlySet<string> {
  let names = movedInSql.get(entity)
  if (!names) movedInSql.set(entity, (names = findSumsMovedInSql(entity)))
  return names
}

function findSumsMovedInSql(entity: EntityModel): ReadonlySet<string> {
  const names = new Set<string>()
  if (entity.system || entity.rules.validations.size > 0) return names
  for (const [name, rule] of entity.rules.computed) {
    const property = entity.properties.get(name)
    if (!rule.sumOf || property?.kind !== 'scalar') continue
    const { encrypted, min, max } = property.decl
    if (!encrypted && min === undefined && max === undefined) names.add(name)
  }
  return names
}
