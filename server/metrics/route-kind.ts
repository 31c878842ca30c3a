// What kind of request a path and method are, as the `kind` label of the request metrics: a
// handful of values whatever the path (entity sets and keys would make a label per entity).
// Called for every request while metrics are on, so the common case (an OData read) costs
// one regular expression test and no allocation.

export type RouteKind = 'read' | 'write' | 'metadata' | 'signin' | 'refresh' | 'pats' | 'roles' | 'workflow' | 'other'

const API = /^\/api(?:\/|$)/i
/** The routes beside OData (auth/auth-routes.ts, auth/pat-routes.ts, workflows/workflow-routes.ts). */
const NOT_ODATA = /^\/api\/(?:auth\/(?:signin|refresh)\/?$|user\/pats(?:\/|$)|roles\/tree\/?$|workflow(?:\/commit|\/abort)?\/?$)/i

export function routeKind(method: string, path: string): RouteKind {
  if (!API.test(path)) return 'other'
  if (NOT_ODATA.test(path)) {
    const route = path.slice(5).toLowerCase()
    if (route.startsWith('auth/signin')) return 'signin'
    if (route.startsWith('auth/refresh')) return 'refresh'
    if (route.startsWith('user/')) return 'pats'
    if (route.startsWith('roles/')) return 'roles'
    return 'workflow'
  }
  if (path.endsWith('$metadata')) return 'metadata'
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write'
}
