// Rules that need more than a property check, run with the other rules on every flush:
// the role tree stays a tree (400 RoleCycle), a role with children is not deleted (409
// RoleHasChildren), and no entity is deleted while a restricting reference points at it.

import { helper, Reference, type EntityManager } from '@mikro-orm/core'
import { RequestError } from '../errors.ts'
import type { EntityModel, Model } from '../model/model.ts'
import { checkRoleDeletable, checkRoleParent } from '../auth/role-rules.ts'
import { byName } from '../persistence/entity-name.ts'

interface Touched {
  readonly entity: object
  readonly meta: EntityModel
  readonly created: boolean
  readonly changed: ReadonlySet<string>
}

export async function runRoleRules(em: EntityManager, _model: Model, touched: Iterable<Touched>, removed: ReadonlySet<object>): Promise<void> {
  const changedRoles = [...touched].filter((t) => t.meta.name === 'Role' && !removed.has(t.entity) && (t.created || t.changed.has('Parent')))
  const pendingParents = new Map<string, string | null>(changedRoles.map((t) => [keyOf(t.entity), parentKey(t.entity)]))
  for (const role of changedRoles) await checkRoleParent(em, keyOf(role.entity), parentKey(role.entity), pendingParents)
  const removedRoles = [...removed].filter((entity) => helper(entity).__meta.className === 'Role')
  const removing = new Set(removedRoles.map(keyOf))
  for (const role of removedRoles) await checkRoleDeletable(em, keyOf(role), removing)
}

/** A restricting reference (onDelete 'restrict') keeps its target from being deleted: 409. */
export async function checkRestrictedDeletes(em: EntityManager, model: Model, removed: ReadonlySet<object>): Promise<void> {
  const removing = new Set([...removed].map(keyOf))
  for (const entity of removed) {
    const meta = model.entities.get(helper(entity).__meta.className)!
    for (const property of meta.properties.values()) {
      if (property.kind !== 'collection' || property.inverse.onDelete !== 'restrict') continue
      const members = (await em.find(byName(property.target.name), { [property.inverse.name]: entity } as never)) as object[]
      const blocking = members.filter((member) => !removing.has(keyOf(member)))
      if (blocking.length > 0) {
        throw RequestError.conflict(`${meta.name} ${keyOf(entity)} still has ${blocking.length} ${property.target.setName} (${property.name}); delete or move them first.`)
      }
    }
  }
}

function keyOf(entity: object): string {
  return String(helper(entity).getPrimaryKey())
}

function parentKey(role: object): string | null {
  const parent = Reference.unwrapReference((role as Record<string, any>).Parent ?? undefined)
  return parent ? keyOf(parent) : null
}
