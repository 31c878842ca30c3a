// The Koa application: middleware order on one screen. A request flows one way:
// health (/healthz, /readyz) → request-log → client-disconnect → error-boundary → cors → headers → router →
// (auth routes | explorer | authenticate → workflow → handler).

import Koa from 'koa'
import Router from '@koa/router'
import { koaBody } from 'koa-body'
import type { ApiState } from './api-state.ts'
import { errorBoundary } from './error-boundary.ts'
import { requestLog } from './request-log.ts'
import { clientDisconnect } from './client-disconnect.ts'
import { odataHeaders } from './odata-headers.ts'
import { cors } from './cors.ts'
import { bodyReadError, readJsonBody } from './json-body.ts'
import { RequestError } from '../errors.ts'
import { authRoutes } from '../auth/auth-routes.ts'
import { authenticate } from '../auth/authenticate.ts'
import { odataRoutes } from '../odata/handlers/odata-routes.ts'
import { openApiRoute } from '../odata/openapi/openapi-route.ts'
import { explorerRoutes } from '../explorer/explorer-routes.ts'
import { workflowRoutes } from '../workflows/workflow-routes.ts'
import type { WorkflowServices } from '../workflows/workflow-services.ts'
import { healthRoutes } from './health.ts'
import { Readiness } from './readiness.ts'
import type { SchemaGate } from '../migrations/schema-gate.ts'

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

  const router = new Router<ApiState>({ prefix: '/api', sensitive: false })
  authRoutes(router, services)
  explorerRoutes(router)
  // '' makes the middleware match case-insensitively like the routes (/API/… too).
  router.use('', authenticate(services))
  workflowRoutes(router, services)
  openApiRoute(router, services)
  odataRoutes(router, services)

  app.use(healthRoutes(new Readiness(services.tenants, services.schemaGate)))
  app.use(requestLog(services.logger, services.metrics))
  app.use(clientDisconnect)
  app.use(errorBoundary)
  app.use(cors(services.config.ApiOptions))
  app.use(odataHeaders)
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
        parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
        onError: (error, ctx) => {
          throw bodyReadError(error, ctx)
        },
      }),
    ),
  )
  app.use(router.routes())
  app.use(async (ctx) => {
    throw RequestError.notFound(`No resource at ${ctx.path}; the service root is /api/.`)
  })
  return app
}
