// No one grants more than they hold (README "Users, roles and personal access tokens"). A caller
// without full access who may write UserRoles, RoleResponsibilities or Roles could otherwise
// give themselves any role (one above their own inherits every role below it), attach any
// responsibility to a role they hold, or hang a role under one they hold; and one who may
// change Users could disable or demote the administrators. So, as a PAT uses only what its
// owner holds, such a caller may only grant responsibilities they hold themselves, and may not
// grant full access (not even through a plugin's method), change or delete a full-access user,
// nor give one a role. Which role a write grants, and what that role gives
// through the tree, only the data says: this runs on the unit of work once a plan is applied,
// before its flush, judging the tree as the unit leaves it (committed rows, then the unit's
// changes over them), so a $batch change set or a workflow that builds a role and grants it in
// several requests is judged as a whole.

import type { AccessContext } from './access-context.ts'
import { AuthError } from '../errors.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'

/** Throws 403 when the unit's changes grant a responsibility `access` does not hold, or change a full-access user. */
export async function checkGrants(unit: UnitOfWork, access: AccessContext): Promise<void> {
  if (access.fullAccess) return
  const changed = unit.entries().filter((entry) => SYSTEM.has(entry.entity.name) && (entry.removed ? entry.state === 'loaded' : unit.changes(entry).length > 0))
  for (const user of changed) {
    if (user.entity.name !== 'User') continue
    // The request's own values are checked when it is bound (authorize.ts authorizeGrants); a
    // method's, which only the data shows, here.
    if (!user.removed && user.values.HasFullAccess === true && user.original?.HasFullAccess !== true) {
      throw AuthError.forbidden('Setting User.HasFullAccess to true needs full access, which you do not have.')
    }
    if (user.original?.HasFullAccess !== true) continue
    const verb = user.removed ? 'Deleting' : 'Changing'
    throw AuthError.forbidden(`${verb} user '${String(user.original.Username)}', who has full access, needs full access, which you do not have.`)
  }
  const grants = changed.filter((entry) => !entry.removed && grantsThrough(entry, unit.changes(entry)))
  if (grants.length === 0) return
  const tree = await loadTree(unit, grants)
  const lacking = (names: Iterable<string>) => [...names].filter((name) => !access.responsibilities.has(name)).sort()
  for (const entry of grants) {
    const row = tree.row(entry)
    switch (entry.entity.name) {
      case 'UserRole': {
        // A role given to a full-access user changes that user too: it disables their full-access fallback PAT for good.
        const holder = tree.fullAccessUser(row.User)
        if (holder) throw AuthError.forbidden(`Giving user '${holder}', who has full access, a role needs full access, which you do not have.`)
        const missing = lacking(tree.gives(row.Role))
        if (missing.length > 0) throw AuthError.forbidden(`Granting role '${tree.roleName(row.Role)}' gives ${list(missing)}, which you do not hold.`)
        break
      }
      case 'RoleResponsibility': {
        const missing = lacking([tree.responsibilityName(row.Responsibility)])
        if (missing.length > 0) throw AuthError.forbidden(`Giving role '${tree.roleName(row.Role)}' ${list(missing)} needs it, which you do not hold.`)
        break
      }
      case 'Role': {
        const missing = lacking(tree.gives(entry.key))
        if (missing.length > 0) {
          throw AuthError.forbidden(`Placing role '${tree.roleName(entry.key)}' under '${tree.roleName(row.Parent)}' gives its holders ${list(missing)}, which you do not hold.`)
        }
        break
      }
    }
  }
}

const SYSTEM = new Set(['User', 'Role', 'UserRole', 'RoleResponsibility'])

/** Whether the change gives someone responsibilities: a role assigned or moved to another user, a responsibility attached, a role placed under another. */
function grantsThrough(entry: Entry, changes: readonly string[]): boolean {
  switch (entry.entity.name) {
    case 'UserRole':
      return changes.includes('Role') || changes.includes('User')
    case 'RoleResponsibility':
      return changes.includes('Role') || changes.includes('Responsibility')
    case 'Role':
      return changes.includes('Parent') && entry.values.Parent != null
    default:
      return false
  }
}

function list(names: readonly string[]): string {
  return names.length === 1 ? `the responsibility '${names[0]}'` : `the responsibilities ${names.map((name) => `'${name}'`).join(', ')}`
}

type References = Readonly<Record<string, string | null>>

/** The role tree and its links as the unit leaves them: rows as committed, the unit's changes over them. */
async function loadTree(unit: UnitOfWork, grants: readonly Entry[]) {
  const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : null)
  // One after another: the unit's statements may share one connection (a transaction), on
  // which pg queues queries sent at once, warns, and (from pg 9) refuses them.
  const roles = await unit.sql<{ Guid: string; Name: string; Parent: string | null }>('select "Guid", "Name", "Parent_Guid" as "Parent" from "Role"')
  const links = await unit.sql<{ Guid: string; Role: string; Responsibility: string }>(
    'select "Guid", "Role_Guid" as "Role", "Responsibility_Guid" as "Responsibility" from "RoleResponsibility"',
  )
  const responsibilities = await unit.sql<{ Guid: string; Name: string }>('select "Guid", "Name" from "Responsibility"')
  const userRoles = await unit.sql<{ Guid: string; Role: string; User: string }>('select "Guid", "Role_Guid" as "Role", "User_Guid" as "User" from "UserRole" where "Guid" = any($1::uuid[])', [
    grants.filter((entry) => entry.entity.name === 'UserRole').map((entry) => entry.key),
  ])
  const administrators = await unit.sql<{ Guid: string; Username: string }>('select "Guid", "Username" from "User" where "HasFullAccess"')
  const rows = new Map<string, Map<string, Record<string, unknown>>>([
    ['Role', new Map(roles.map((row) => [row.Guid, row]))],
    ['RoleResponsibility', new Map(links.map((row) => [row.Guid, row]))],
    ['UserRole', new Map(userRoles.map((row) => [row.Guid, row]))],
  ])
  for (const entry of unit.entries()) {
    const table = rows.get(entry.entity.name)
    if (!table) continue
    if (entry.removed || entry.state === 'gone') table.delete(entry.key)
    else table.set(entry.key, { ...table.get(entry.key), ...entry.values })
  }
  const referencesOf = (name: string, key: string): References => {
    const row = rows.get(name)?.get(key) ?? {}
    return Object.fromEntries(Object.entries(row).map(([property, value]) => [property, lower(value)]))
  }
  const childrenOf = Map.groupBy([...rows.get('Role')!.entries()], ([, row]) => lower(row.Parent))
  const responsibilitiesOf = Map.groupBy([...rows.get('RoleResponsibility')!.values()], (row) => lower(row.Role))
  const responsibilityNames = new Map(responsibilities.map((row) => [row.Guid, row.Name]))
  const fullAccess = new Map(administrators.map((row) => [row.Guid, row.Username]))
  return {
    row: (entry: Entry): References => referencesOf(entry.entity.name, entry.key),
    /** The name of the user `key` when they have full access (as committed: only a full-access caller changes that). */
    fullAccessUser: (key: string | null) => fullAccess.get(key ?? ''),
    roleName: (key: string | null) => String(rows.get('Role')!.get(key ?? '')?.Name ?? key),
    responsibilityName: (key: string | null) => responsibilityNames.get(key ?? '') ?? String(key),
    /** The responsibilities a role gives its holders: its own and every descendant's (a supervisor holds the roles below it). */
    gives(role: string | null): Set<string> {
      const given = new Set<string>()
      const seen = new Set<string>()
      const queue = role ? [role] : []
      while (queue.length > 0) {
        const current = queue.shift()!
        if (seen.has(current)) continue
        seen.add(current)
        for (const link of responsibilitiesOf.get(current) ?? []) given.add(responsibilityNames.get(lower(link.Responsibility) ?? '') ?? String(link.Responsibility))
        for (const [child] of childrenOf.get(current) ?? []) queue.push(child)
      }
      return given
    },
  }
}
