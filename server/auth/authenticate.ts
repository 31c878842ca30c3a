// The authentication stage (specification 5.1, 5.6, 5.9): credentials → tenant and
// AccessContext on ctx.state, or 401 with WWW-Authenticate. Two kinds of credential:
//
//   Authorization: Bearer <JWT>                      an interactive sign-in (access-tokens.ts)
//   Authorization: Basic base64("pat:" + secret)     a personal access token (secrets.ts)
//
// With both caches warm this runs no SQL: the token, the user's access and the PAT's scope
// are all remembered (access-service.ts).

import type { Middleware } from 'koa'
import type { ApiState } from '../http/api-state.ts'
import type { AuthServices } from './auth-services.ts'
import type { TenantLease } from '../tenancy/tenant-registry.ts'
import { AuthError } from '../errors.ts'
import { parseSecret } from './secrets.ts'

export function authenticate(services: AuthServices): Middleware<ApiState> {
  return async (ctx, next) => {
    const header = ctx.get('Authorization')
    if (!header) throw AuthError.missingCredentials()
    const space = header.indexOf(' ')
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
    const value = space < 0 ? '' : header.slice(space + 1).trim()
    let lease: TenantLease | undefined
    try {
      if (scheme === 'bearer') {
        const token = await services.auth.tokens.verify(value)
        lease = await services.tenants.acquire(token.tenant)
        if (!lease) throw AuthError.invalidToken(`tenant '${token.tenant}' is unknown`)
        const db = lease.database
        // Before the user is read: a request that fails there (its database down) is still its tenant's, in the log and the metrics.
        ctx.state.tenant = db
        const user = await services.access.forUser(db, token.userGuid)
        if (!user) throw AuthError.invalidToken('its user no longer exists')
        if (user.disabled) throw AuthError.invalidToken('its user is disabled')
        ctx.state.access = user.context
      } else if (scheme === 'basic') {
        const secret = patSecretOf(value)
        const parsed = parseSecret('pat', secret)
        if (!parsed) throw AuthError.invalidToken('Basic credentials must be the user name "pat" and a personal access token')
        lease = await services.tenants.acquire(parsed.tenant)
        if (!lease) throw AuthError.invalidToken('unknown personal access token')
        ctx.state.tenant = lease.database
        ctx.state.access = await services.access.forPat(lease.database, parsed.hash)
      } else {
        throw AuthError.invalidToken(`the ${scheme} scheme is not supported; use Bearer or Basic`)
      }
      // Only now is the body worth reading (http/json-body.ts).
      await ctx.state.readBody?.()
      // The tenant stays open until the request is done with it (tenant-registry.ts).
      return await next()
    } finally {
      lease?.release()
    }
  }
}

/** The password of `Basic base64("pat:<secret>")`, or undefined when the header is not that. */
function patSecretOf(encoded: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length > 1024) return undefined
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0 || decoded.slice(0, colon) !== 'pat') return undefined
  return decoded.slice(colon + 1)
}
