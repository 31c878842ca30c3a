// URLs the responses carry: the service root and @odata.context.
//   Orders?$select=Number,Total  →  http://host/api/$metadata#Orders(Number,Total)

import type { EntityModel } from '../../model/model.ts'
import type { SelectItemSyntax } from '../parser/syntax.ts'

/** The service root of a request: Server:PublicUrl when configured, else the host it was sent to. */
export function serviceRoot(ctx: { readonly protocol: string; readonly host: string }, services: { readonly config: { readonly Server: { readonly PublicUrl?: string } } }): string {
  const configured = services.config.Server.PublicUrl
  return `${configured ? configured.replace(/\/$/, '') : `${ctx.protocol}://${ctx.host}`}/api/`
}

/** `root` is the service root (serviceRoot). */
export function contextUrl(
  root: string,
  entity: EntityModel,
  select: readonly SelectItemSyntax[] | undefined,
  aggregated: boolean,
  single = false,
): string {
  return root + contextPath(entity, select, aggregated, single)
}

/** What follows the service root in @odata.context: `$metadata#Orders(Number,Total)`. */
export function contextPath(entity: EntityModel, select: readonly SelectItemSyntax[] | undefined, aggregated: boolean, single = false): string {
  const names = select?.map((item) => (item.kind === 'selectAll' ? '*' : item.kind === 'selectPath' ? item.path.join('/') : `${item.namespace}.*`))
  const projection = aggregated ? '()' : names?.length ? `(${names.join(',')})` : ''
  return `$metadata#${entity.setName}${projection}${single ? '/$entity' : ''}`
}
