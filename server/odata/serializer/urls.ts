// URLs the responses carry: the service root and @odata.context.
//   Orders?$select=Number,Total  →  http://host/api/$metadata#Orders(Number,Total)

import type { EntityModel } from '../../model/model.ts'
import type { Services } from '../../services.ts'
import type { SelectItemSyntax } from '../parser/syntax.ts'
import type { ApiContext } from '../handlers/odata-routes.ts'

export function serviceRoot(ctx: ApiContext, services: Services): string {
  const configured = services.config.Server.PublicUrl
  return `${configured ? configured.replace(/\/$/, '') : `${ctx.protocol}://${ctx.host}`}/api/`
}

export function contextUrl(
  ctx: ApiContext,
  services: Services,
  entity: EntityModel,
  select: readonly SelectItemSyntax[] | undefined,
  aggregated: boolean,
  single = false,
): string {
  const names = select?.map((item) => (item.kind === 'selectAll' ? '*' : item.kind === 'selectPath' ? item.path.join('/') : `${item.namespace}.*`))
  const projection = aggregated ? '()' : names?.length ? `(${names.join(',')})` : ''
  return `${serviceRoot(ctx, services)}$metadata#${entity.setName}${projection}${single ? '/$entity' : ''}`
}
