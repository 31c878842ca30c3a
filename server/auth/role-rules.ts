// Business rules of the role tree (specification 2.5, decisions.md "Roles and permissions"),
// called by the write path before a flush and by the CLI:
//
//   await lockRoleTree(sql)                                    // until the write commits
//   await checkRoleParent(sql, role.Guid, role.Parent?.Guid)   // 400 RoleCycle
//   await checkRoleDeletable(sql, role.Guid)                   // 409 RoleHasChildren
//
// Both read through the caller's connection (persistence/sql.ts). Changes of the same flush that the database
// does not hold yet are passed in (`pendingParents`, `removing`), so a flush that re-parents
// or deletes several roles at once is judged as a whole.

import { ServiceError } from '../errors.ts'
import type { Sql } from '../persistence/sql.ts'
import { quotedName } from '../model/control-characters.ts'

interface RoleRow {
  readonly Guid: string
  readonly Name: string
  readonly Parent_Guid: string | null
}

/** Depth at which a walk up the tree gives up: far beyond any real hierarchy. */
const MAX_DEPTH = 10_000

/** pg_advisory_xact_lock key of a tenant's role tree: "ectl-rt" as a number, the same on every instance. */
const ROLE_TREE_LOCK = 0x6563_746c_7274

/**
 * Holds the tenant's role tree until the caller's transaction ends. The checks below read
 * parents that a concurrent write may be changing: X under Y and Y under X, each checked
 * against the other's old parent, both pass and make a cycle. Taken before the checks and
 * held until the write commits, changes of the tree pass one at a time, each checked
 * against the tree as the one before left it.
 */
export async function lockRoleTree(sql: Sql): Promise<void> {
  await sql('select pg_advisory_xact_lock($1)', [ROLE_TREE_LOCK])
}

/**
 * Throws 400 RoleCycle when `newParentGuid` as the parent of `roleGuid` would make the roles
 * a cycle (a role its own ancestor). null or undefined: no parent, always fine. `target`: the
 * error's target, the Parent property as the caller's clients name it.
 */
export async function checkRoleParent(
  sql: Sql,
  roleGuid: string,
  newParentGuid: string | null | undefined,
  pendingParents: ReadonlyMap<string, string | null> = new Map(),
  target = 'Parent',
): Promise<void> {
  if (!newParentGuid) return
  const roles = await sql<RoleRow>('select "Guid", "Name", "Parent_Guid" from "Role"')
  const parentOf = new Map<string, string | null>(roles.map((r: RoleRow) => [r.Guid, r.Parent_Guid]))
  const nameOf = new Map<string, string>(roles.map((r: RoleRow) => [r.Guid, r.Name]))
  for (const [guid, parent] of pendingParents) parentOf.set(guid, parent)
  parentOf.set(roleGuid, newParentGuid)
  const path = [roleGuid]
  for (let current: string | null | undefined = newParentGuid; current; current = parentOf.get(current)) {
    path.push(current)
    if (current === roleGuid) {
      const names = path.reverse().map((guid) => quotedName(nameOf.get(guid) ?? guid))
      throw new ServiceError(
        'RoleCycle',
        `Role ${names[names.length - 1]} cannot have ${names[names.length - 2]} as its parent: the roles would form a cycle (${names.join(' → ')}).`,
        { target },
      )
    }
    if (path.length > MAX_DEPTH) break
  }
}

/** Throws 409 RoleHasChildren when the role still has child roles (other than ones being removed with it). */
export async function checkRoleDeletable(sql: Sql, roleGuid: string, removing: ReadonlySet<string> = new Set()): Promise<void> {
  const rows = await sql<RoleRow>('select "Guid", "Name" from "Role" where "Parent_Guid" = $1 order by "Name"', [roleGuid])
  const children = rows.filter((r: RoleRow) => !removing.has(r.Guid))
  if (children.length === 0) return
  const [{ Name: name } = { Name: roleGuid }] = await sql<RoleRow>('select "Name" from "Role" where "Guid" = $1', [roleGuid])
  throw new ServiceError(
    'RoleHasChildren',
    `Role ${quotedName(name)} has ${children.length} child role(s) (${children.map((c: RoleRow) => quotedName(c.Name)).join(', ')}); re-parent or remove them first.`,
  )
}
