// Rules of the system entities that need more than a property check: the role tree stays
// a tree (RoleCycle), and a role with children cannot be deleted (RoleHasChildren).

import type { EntityManager } from '@mikro-orm/core'
import type { ErrorDetail } from '../errors.ts'
import type { EntityModel, Model } from '../model/model.ts'

interface Touched {
  readonly entity: object
  readonly meta: EntityModel
  readonly created: boolean
  readonly changed: ReadonlySet<string>
}

export async function runRoleRules(
  _em: EntityManager,
  _model: Model,
  _touched: Iterable<Touched>,
  _removed: ReadonlySet<object>,
): Promise<ErrorDetail[]> {
  // REVISIT: wired to server/auth/role-rules.ts once the authorization work lands.
  return []
}
