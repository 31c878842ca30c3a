// Binds a URL against the demo model as the read handler does (parse → bind), without a
// server: what the stage tables of test/odata/{semantic,plan,sql} start from.

import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { DEFAULT_NAMESPACE } from '../../../server/odata/metadata/build-csdl.ts'
import { parseQueryOptions } from '../../../server/odata/parser/query-options-parser.ts'
import { parseResourcePath } from '../../../server/odata/parser/resource-path-parser.ts'
import { createBindContext } from '../../../server/odata/semantic/bind-context.ts'
import { bindPath } from '../../../server/odata/semantic/bind-path.ts'
import { bindTargetRead, type DefaultSelect } from '../../../server/odata/semantic/bind-read.ts'
import type { BoundCollectionRead, BoundEntityByKey } from '../../../server/odata/semantic/bound.ts'

export const LIMITS = { maxTop: 500, maxNodeCount: 100, maxExpansionDepth: 5 }

/** `Orders?$filter=Total gt 100` (options as a client writes them, spaces allowed) → the bound read. */
export function bindUrl(model: Model, url: string, defaultSelect: DefaultSelect = 'Key'): BoundCollectionRead | BoundEntityByKey {
  const naming = namingPolicy(false)
  const [path, query = ''] = url.split('?')
  const target = bindPath(model, naming, parseResourcePath(path), DEFAULT_NAMESPACE)
  if (target.kind !== 'collection' && target.kind !== 'entity') throw new Error(`${url} does not read entities`)
  const options = parseQueryOptions(query.replaceAll(' ', '%20'))
  return bindTargetRead(createBindContext(naming, LIMITS, options.aliases), target, options, defaultSelect)
}
