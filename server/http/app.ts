// The Koa application: middleware order on one screen. A request flows one way:
// health (/healthz, /readyz) → request-log → client-disconnect → error-boundary → cors → headers →
// body → the fixed routes (sign-in, PATs, role tree, workflow begin/commit/abort, explorer, OpenAPI),
// or, for anything else under /api, authenticate → workflow → OData.

import Koa, { type Middleware } from 'koa'
import Router from '@koa/router'
import { koaBody } from 'koa-body'
import type { ApiState } from './api-state.ts'
import { errorBoundary } from './error-boundary.ts'
import { requestLog } from './request-log.ts'
import { clientDisconnect } from './client-disconnect.ts'
import { stalledAnswer } from './stalled-answer.ts'
import { inTurn } from './pipelined-requests.ts'
import { odataHeaders } from './odata-headers.ts'
import { cors } from './cors.ts'
import { BODY_METHODS, bodyReadError, readJsonBody } from './json-body.ts'
import { RequestError } from '../errors.ts'
import { authRoutes } from '../auth/auth-routes.ts'
import { authenticate } from '../auth/authenticate.ts'
import { odataRoute } from '../odata/handlers/odata-routes.ts'
import { addressesProperty } from '../odata/handlers/property-paths.ts'
import { formatOption, negotiate } from '../odata/handlers/negotiate.ts'
import { openApiRoute } from '../odata/openapi/openapi-route.ts'
import { explorerRoutes } from '../explorer/explorer-routes.ts'
import { refuseSystemRoutesInWorkflow, workflowRoutes, workflowStage } from '../workflows/workflow-routes.ts'
import type { WorkflowServices } from '../workflows/workflow-services.ts'
import { healthRoutes, PROBE_PATHS } from './health.ts'
import { Readiness } from './readiness.ts'
import type { SchemaGate } from '../migrations/schema-gate.ts'
import type { Model } from '../model/model.ts'
import { isReservedSegment } from '../model/reserved-set-names.ts'

/**
 * What the routes are handed by the composition root (server/start.ts): the union of what
 * auth, the OData routes and the workflows need (a workflow request passes through all three),
 * and for /readyz the tenants refused for their schema (migrations/schema-gate.ts).
 */
export interface AppServices extends WorkflowServices {
  readonly schemaGate?: SchemaGate
}

export function createApp(services: AppServices): Koa<ApiState> {
  const app = new Koa<ApiState>({ proxy: false })
  app.silent = true

  // Each fixed route that needs credentials names the authenticate stage itself.
  const routes = new Router<ApiState>({ prefix: '/api', sensitive: false })
  authRoutes(routes, services)
  explorerRoutes(routes)
  workflowRoutes(routes, services)
  openApiRoute(routes, services)

  app.use(inTurn)
  app.use(healthRoutes(new Readiness(services.tenants, services.schemaGate)))
  app.use(requestLog(services.logger, services.metrics, services.config.Server.LogQueryValues))
  app.use(clientDisconnect)
  app.use(stalledAnswer(() => services.config.ApiOptions.QueryTimeoutSeconds * 1000))
  app.use(errorBoundary)
  app.use(cors(services.config.ApiOptions))
  app.use(odataHeaders((path) => addressesProperty(services, path)))
  app.use(refuseSystemRoutesInWorkflow)
  // The JSON body is read by authenticate once it accepts the credentials, or at once for
  // sign-in and refresh (json-body.ts).
  app.use(
    readJsonBody(
      koaBody({
        json: true,
        multipart: false,
        urlencoded: false,
        text: false,
        jsonLimit: services.config.ApiOptions.MaxBodyBytes,
        jsonStrict: false,
        parsedMethods: [...BODY_METHODS] as never,
        onError: (error, ctx) => {
          throw bodyReadError(error, ctx)
        },
      }),
    ),
  )
  app.use(fixedRoutes(routes, services.model))
  app.use(underApi(authenticate(services), workflowStage(services), odataRoute(services)))
  app.use(async (ctx) => {
    if (PROBE_PATHS.has(ctx.path)) throw RequestError.methodNotAllowed(ctx.method, ctx.path, ['GET', 'HEAD'])
    throw RequestError.notFound(`No resource at ${ctx.path}; the service root is /api/.`)
  })
  return app
}

/**
 * The router, asked only about paths whose first segment under /api begins one of its routes
 * (auth, user, workflow, …): an OData request skips it. Routing every request through it,
 * matching each route and composing a chain of three layers, cost a key read about 8% of its
 * server CPU (README, Performance). A path the router does not take goes on to the OData
 * stages only when its first segment names an entity set (/api/roles/$count, the Roles set's
 * alias); any other is 404 naming the routes of its family, not OData's "No entity set 'auth'".
 */
function fixedRoutes(router: Router<ApiState>, model: Model): Middleware<ApiState> {
  const routed = router.routes() as Middleware<ApiState>
  const families = routeFamilies(router)
  const parents = parentPaths(router)
  const dispatch: Middleware<ApiState> = (ctx, next) => {
    const family = families.get(firstSegment(ctx.path) ?? '')
    if (!family) return next()
    // A fixed route asked with a method it does not take is 405 (decisions.md, Errors), not
    // handed on to the OData stages, which would look for an entity set named `auth`.
    const matched = router.match(ctx.path, ctx.method)
    const allowed = [...new Set(matched.path.flatMap((layer) => layer.methods))]
    if (!matched.route && allowed.length > 0) throw RequestError.methodNotAllowed(ctx.method, ctx.path, allowed)
    // So is the path a fixed route hangs under, /api/user/pats/{id}, which takes no method itself.
    if (matched.path.length === 0 && parents.match(ctx.path, ctx.method).route) throw RequestError.methodNotAllowed(ctx.method, ctx.path, [])
    if (matched.path.length === 0 && !model.sets.has(FIRST_SEGMENT.exec(ctx.path)![1])) throw RequestError.notFound(`No route at ${ctx.path}; the routes under ${family.root} are ${family.routes.join(', ')}.`)
    // Their answers are JSON (the explorer's are its page and files): a client that accepts no JSON is told so, 406, as by the OData routes.
    if (matched.route && firstSegment(ctx.path) !== 'explorer') negotiate(ctx.get('Accept'), formatOption(ctx.querystring), ['json'])
    return routed(ctx, next)
  }
  // As on the router's own middleware: what test/auth/route-permissions.test.ts lists the routes of.
  return Object.assign(dispatch, { router })
}

/** A first segment of the fixed routes, lower case, and how a 404 under it lists them: `POST /api/auth/signin`. */
interface RouteFamily {
  readonly root: string
  readonly routes: string[]
}

function routeFamilies(router: Router<ApiState>): Map<string, RouteFamily> {
  const families = new Map<string, RouteFamily>()
  for (const layer of router.stack) {
    const path = String(layer.path)
    const segment = firstSegment(path)
    if (segment === undefined) continue
    // Plugins may not name an entity set so (model/reserved-set-names.ts): it would be shadowed.
    if (!isReservedSegment(segment)) throw new Error(`The fixed route ${path} begins with /api/${segment}, which model/reserved-set-names.ts does not reserve`)
    const family = families.get(segment) ?? { root: `/api/${segment}`, routes: [] }
    families.set(segment, family)
    for (const method of layer.methods) if (method !== 'HEAD') family.routes.push(`${method} ${path}`)
  }
  return families
}

/**
 * The paths the fixed routes hang under that are no route themselves (/api/user/pats/:id of
 * …/revoke), as a router that matches them with any method. Only those two segments or more
 * under /api: /api/roles, the parent of /api/roles/tree, is the Roles set's alias.
 */
function parentPaths(router: Router<ApiState>): Router<ApiState> {
  const routes = new Set(router.stack.map((layer) => String(layer.path).toLowerCase()))
  const parents = new Router<ApiState>({ sensitive: false })
  for (const layer of router.stack) {
    const parent = String(layer.path).replace(/\/[^/]+$/, '')
    if (parent.split('/').length > 3 && !routes.has(parent.toLowerCase())) parents.all(parent, () => undefined)
  }
  return parents
}

/** `auth` of /api/auth/signin, lower case: the router matches case-insensitively. */
function firstSegment(path: string): string | undefined {
  return FIRST_SEGMENT.exec(path)?.[1].toLowerCase()
}

const FIRST_SEGMENT = /^\/api\/([^/]+)/i

/**
 * Paths of the API, as the router matches them: case-insensitive, and /api alone included,
 * the service root as clients are given it (odata2ts fetches its CSRF token there).
 */
const API_PATH = /^\/api(?:\/|$)/i

/** The three stages of an OData request, in order, for paths under /api; anything else passes by. */
function underApi(authenticated: Middleware<ApiState>, workflow: Middleware<ApiState>, odata: Middleware<ApiState>): Middleware<ApiState> {
  return (ctx, next) => {
    if (!API_PATH.test(ctx.path)) return next()
    return authenticated(ctx, () => workflow(ctx, () => odata(ctx, next)))
  }
}
