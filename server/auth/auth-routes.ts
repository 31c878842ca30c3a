// The fixed routes of the auth subsystem (http/app.ts): sign-in and refresh are open; the
// others authenticate themselves with the stage OData requests pass (authenticate.ts).
//
//   POST /api/auth/signin     { TenantId, Username, Password } → tokens
//   POST /api/auth/refresh    { RefreshToken }                 → tokens
//   GET  /api/roles/tree                                        → role hierarchy
//   /api/user/pats…                                             → pat-routes.ts

import type Router from '@koa/router'
import type { ApiState } from '../http/api-state.ts'
import type { AuthServices } from './auth-services.ts'
import { AuthError } from '../errors.ts'
import { authenticate } from './authenticate.ts'
import { clientAddressResolver } from './client-address.ts'
import { patRoutes } from './pat-routes.ts'
import { loadRoleTree, publicRoleTree } from './role-tree.ts'
import { refresh, signIn } from './sign-in.ts'
import { authorize } from '../odata/semantic/authorize.ts'

export function authRoutes(router: Router<ApiState>, services: AuthServices): void {
  const clientAddressOf = clientAddressResolver(services.config.Server.TrustedProxies)

  router.post('/auth/signin', async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    const clientAddress = clientAddressOf(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For'))
    ctx.body = await signIn(services, ctx.request.body, clientAddress, ctx.state)
  })

  router.post('/auth/refresh', async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.body = await refresh(services, ctx.request.body, ctx.state)
  })

  const authenticated = authenticate(services)

  router.get('/roles/tree', authenticated, async (ctx) => {
    const { access, tenant } = ctx.state
    if (!access || !tenant) throw AuthError.missingCredentials()
    authorize(access, { kind: 'readAll', entity: services.model.entities.get('Role')!, by: 'Reading the role tree' })
    ctx.body = publicRoleTree(await loadRoleTree(tenant.pool), services.naming)
  })

  patRoutes(router, services, authenticated)
}
