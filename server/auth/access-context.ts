// Who is asking, resolved once per request (specification 5.9): the tenant, the user and
// the permissions their current roles (through the hierarchy) or their PAT grant.

import type { Permission } from '../model/declarations.ts'

export interface AccessContext {
  readonly tenant: string
  readonly userGuid: string
  readonly username: string
  readonly credential: 'user' | 'pat'
  readonly patId?: string
  /** true: passes every permission check (a full-access user, or an active fallback PAT). */
  readonly fullAccess: boolean
  /** Names of the responsibilities in effect. */
  readonly responsibilities: ReadonlySet<string>
  /** entity name → permissions granted by those responsibilities. */
  readonly permissions: ReadonlyMap<string, ReadonlySet<Permission>>
}

export function can(access: AccessContext, entity: string, permission: Permission): boolean {
  return access.fullAccess || (access.permissions.get(entity)?.has(permission) ?? false)
}

/**
 * Whether `access` grants at least what `earlier` granted: full access, or every responsibility
 * `earlier` had (permissions come from responsibilities alone).
 */
export function holdsAtLeast(access: AccessContext, earlier: { readonly fullAccess: boolean; readonly responsibilities: readonly string[] }): boolean {
  if (access.fullAccess) return true
  return !earlier.fullAccess && earlier.responsibilities.every((name) => access.responsibilities.has(name))
}
