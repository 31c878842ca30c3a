// /api/user/pats (specification 4.5): a signed-in user manages their own PATs. Only an
// interactive sign-in may (5.7): a PAT here is 403, so a leaked PAT cannot mint others.
//
//   POST /api/user/pats                   { name, expirationDays, responsibilityIds } → item + secret
//   GET  /api/user/pats                   → [item]
//   POST /api/user/pats/{id}/revoke       → item
//   POST /api/user/pats/{id}/regenerate   → item + secret

import type Router from '@koa/router'
import type { RouterContext } from '@koa/router'
import type { Middleware } from 'koa'
import type { ApiState } from '../http/api-state.ts'
import type { AuthServices } from './auth-services.ts'
import { AuthError, RequestError } from '../errors.ts'
import type { AccessContext } from './access-context.ts'
import { issuePat, listPats, readPatRequest, regeneratePat, revokePat } from './pats.ts'
import { bodyObject } from './request-body.ts'

export function patRoutes(router: Router<ApiState>, services: AuthServices, authenticated: Middleware<ApiState>): void {
  router.post('/user/pats', authenticated, async (ctx) => {
    const { access, db } = interactive(ctx)
    const request = readPatRequest(bodyObject(ctx.request.body))
    const owner = await services.access.forUser(db, access.userGuid, { fresh: true })
    if (!owner) throw AuthError.invalidToken('its user no longer exists')
    ctx.body = await issuePat(db, owner, request)
  })

  router.get('/user/pats', authenticated, async (ctx) => {
    const { access, db } = interactive(ctx)
    await services.access.flushPatUses(db.tenant)
    ctx.body = await listPats(db, access.userGuid)
  })

  router.post('/user/pats/:id/revoke', authenticated, async (ctx) => {
    const { access, db } = interactive(ctx)
    const item = await revokePat(db, access.userGuid, ctx.params.id)
    if (!item) throw notFound(ctx.params.id)
    await services.access.changed(db, '_Pat')
    ctx.body = item
  })

  router.post('/user/pats/:id/regenerate', authenticated, async (ctx) => {
    const { access, db } = interactive(ctx)
    const item = await regeneratePat(db, access.userGuid, ctx.params.id)
    if (!item) throw notFound(ctx.params.id)
    await services.access.changed(db, '_Pat')
    ctx.body = item
  })
}

function interactive(ctx: RouterContext<ApiState>) {
  const { access, tenant } = ctx.state
  if (!access || !tenant) throw AuthError.missingCredentials()
  if (access.credential !== 'user') {
    throw AuthError.forbidden('Personal access tokens are managed with an interactive sign-in (Bearer token), not with a PAT.')
  }
  ctx.set('Cache-Control', 'no-store')
  return { access: access as AccessContext, db: tenant }
}

function notFound(id: string) {
  return RequestError.notFound(`You have no personal access token '${id}'.`)
}
