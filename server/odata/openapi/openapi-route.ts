// GET /api/openapi.json: the OpenAPI document, under the same credentials as $metadata
// (decisions.md, "Operations surface"). A fixed route, so the OData stage never reads
// `openapi.json` as an entity set.

import type Router from '@koa/router'
import type { ApiState } from '../../http/api-state.ts'
import type { MetadataSource } from '../metadata/metadata-document.ts'
import type { AuthServices } from '../../auth/auth-services.ts'
import { authenticate } from '../../auth/authenticate.ts'
import { authorize } from '../semantic/authorize.ts'
import { openApiDocument } from './openapi-document.ts'

const OPENAPI_PATH = '/openapi.json'

export function openApiRoute(router: Router<ApiState>, services: MetadataSource & AuthServices): void {
  router.get(OPENAPI_PATH, authenticate(services), async (ctx) => {
    authorize(ctx.state.access, { kind: 'model' })
    ctx.type = 'application/json; charset=utf-8'
    ctx.body = openApiDocument(services)
  })
}
