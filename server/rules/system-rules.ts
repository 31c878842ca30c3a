// Rules that need more than a property check, run with the other rules on every flush:
// the role tree stays a tree (400 RoleCycle), a role with children is not deleted (409
// RoleHasChildren), and no entity is deleted while a restricting reference points at it.

import { RequestError } from '../errors.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'
import { checkRoleDeletable, checkRoleParent, lockRoleTree } from '../auth/role-rules.ts'

interface Touched {
  readonly entry: Entry
  readonly created: boolean
  readonly changed: ReadonlySet<string>
}

export async function runRoleRules(unit: UnitOfWork, touched: Iterable<Touched>, removed: ReadonlySet<Entry>): Promise<void> {
  const changedRoles = [...touched].filter((t) => t.entry.entity.name === 'Role' && !t.entry.removed && (t.created || t.changed.has('Parent')))
  const parentOf = (entry: Entry) => (entry.values.Parent as string | null | undefined) ?? null
  const pendingParents = new Map<string, string | null>(changedRoles.map((t) => [t.entry.key, parentOf(t.entry)]))
  const removedRoles = [...removed].filter((entry) => entry.entity.name === 'Role')
  // The checks read the tree as committed; it must stay so until this write commits.
  if (changedRoles.length > 0 || removedRoles.length > 0) await lockRoleTree(unit.sql)
  for (const role of changedRoles) await checkRoleParent(unit.sql, role.entry.key, parentOf(role.entry), pendingParents, unit.targetOf(role.entry, 'Parent'))
  const removing = new Set(removedRoles.map((entry) => entry.key))
  for (const role of removedRoles) await checkRoleDeletable(unit.sql, role.key, removing)
}

/** Whether the unit adds, re-parents or removes a role: its flush then holds the role tree's lock (runRoleRules). */
export function changesRoleTree(unit: UnitOfWork): boolean {
  return unit.entries().some((entry) => entry.entity.name === 'Role' && (entry.removed ? entry.state === 'loaded' : entry.state === 'new' || unit.changes(entry).includes('Parent')))
}

/**
 * A restricting reference (onDelete 'restrict') keeps its target from being deleted: 409. The
 * message says that such members exist, which the refusal tells anyway, not how many: the
 * deleter may have no read permission on them, and a count is what reading them would give.
 */
export async function checkRestrictedDeletes(unit: UnitOfWork, removed: ReadonlySet<Entry>): Promise<void> {
  for (const entry of removed) {
    for (const property of entry.entity.properties.values()) {
      if (property.kind !== 'collection' || property.inverse.onDelete !== 'restrict') continue
      const blocking = await unit.find(property.target, { [property.inverse.name]: entry.key })
      if (blocking.length > 0) {
        // Named as the client navigates to them (Customers(k)/Orders); the set too when that name does not say it.
        const navigation = unit.publicName(property.name)
        const what = navigation.toLowerCase() === property.target.setName.toLowerCase() ? navigation : `${navigation} (${property.target.setName})`
        throw RequestError.conflict(keptFromDeletion(unit, entry, what))
      }
    }
  }
}

/**
 * Why `entry` cannot go, naming only what the caller named: a row a cascade reached by its way
 * from the deleted entity (`its Orders' Lines`), one a method removed by the method, never by
 * its key: the caller may not read it, and its key is not theirs to learn.
 */
function keptFromDeletion(unit: UnitOfWork, entry: Entry, what: string): string {
  const path: string[] = []
  let root = entry
  for (let cause = unit.removalCause(root); cause?.kind === 'cascade'; cause = unit.removalCause(root)) {
    path.unshift(unit.publicName(cause.navigation))
    root = cause.from
  }
  const cause = unit.removalCause(root)
  const method = cause?.kind === 'method' ? cause.method : undefined
  if (path.length === 0) {
    const subject = method ? `${method} deletes an entity of ${root.entity.name} that` : `${root.entity.name} ${root.key}`
    return `${subject} still has ${what}, which keep it from being deleted; delete or move them first.`
  }
  const members = path.map((navigation, index) => (index < path.length - 1 ? possessive(navigation) : navigation)).join(' ')
  const subject = method ? `${method} deletes an entity of ${root.entity.name} whose ${members}` : `${root.entity.name} ${root.key} cannot be deleted: its ${members}`
  return `${subject}, deleted with it, still have ${what}, which keep them from being deleted; delete or move those first.`
}

function possessive(noun: string): string {
  return noun.endsWith('s') ? `${noun}'` : `${noun}'s`
}
