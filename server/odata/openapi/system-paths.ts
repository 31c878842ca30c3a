// The fixed routes beside the entity sets: sign-in and refresh (open), personal access
// tokens, the role tree, workflows, the service document, $metadata and this document
// (server/auth/auth-routes.ts, pat-routes.ts, workflows/workflow-routes.ts).

import { json, jsonBody, responses, type PathItem } from './common.ts'
import type { JsonSchema } from './json-schemas.ts'

const object = (properties: Record<string, JsonSchema>, required: string[] = Object.keys(properties)): JsonSchema => ({ type: 'object', properties, required })
const string: JsonSchema = { type: 'string' }
const dateTime: JsonSchema = { type: 'string', format: 'date-time' }
const uuid: JsonSchema = { type: 'string', format: 'uuid' }

const TOKENS = object({ accessToken: string, accessTokenExpiresAt: dateTime, refreshToken: string, refreshTokenExpiresAt: dateTime, tokenType: { const: 'Bearer' } })

const PAT = object({
  id: uuid,
  name: string,
  createdAt: dateTime,
  expiresAt: dateTime,
  lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  responsibilityIds: { type: 'array', items: uuid },
  isFullAccessFallback: { type: 'boolean' },
  status: string,
})
const ISSUED_PAT = { ...PAT, properties: { ...(PAT.properties as object), secret: { type: 'string', description: 'Shown once: send it as Basic pat:<secret>' } } }

const WORKFLOW_HEADERS = [
  { name: 'Workflow-Id', in: 'header', required: true, schema: uuid },
  { name: 'Workflow-Index', in: 'header', required: true, description: 'The index after the last request sent in the workflow', schema: { type: 'integer', minimum: 1 } },
]

const tags = (tag: string) => [tag]
const OPEN = { security: [] }

export function systemPaths(): Record<string, PathItem> {
  const patId = { name: 'id', in: 'path', required: true, schema: uuid }
  return {
    '/auth/signin': {
      post: {
        ...OPEN,
        tags: tags('Sign-in'),
        summary: 'Sign in: a tenant, a user name and a password → an access token (Bearer) and a refresh token',
        operationId: 'auth.signin',
        requestBody: jsonBody(object({ TenantId: string, Username: string, Password: { type: 'string', format: 'password' } })),
        responses: responses({ '200': json('The tokens', TOKENS) }, ['400', '401']),
      },
    },
    '/auth/refresh': {
      post: {
        ...OPEN,
        tags: tags('Sign-in'),
        summary: 'A refresh token → new tokens (each refresh token is used once)',
        operationId: 'auth.refresh',
        requestBody: jsonBody(object({ RefreshToken: string })),
        responses: responses({ '200': json('The tokens', TOKENS) }, ['400', '401']),
      },
    },
    '/user/pats': {
      get: {
        tags: tags('Personal access tokens'),
        summary: "The signed-in user's personal access tokens",
        operationId: 'user.pats.list',
        responses: responses({ '200': json('The tokens, without their secrets', { type: 'array', items: PAT }) }, ['401', '403']),
      },
      post: {
        tags: tags('Personal access tokens'),
        summary: 'Issue a personal access token, scoped to some of your responsibilities',
        operationId: 'user.pats.issue',
        requestBody: jsonBody(object({ name: string, expirationDays: { type: 'integer', minimum: 1 }, responsibilityIds: { type: 'array', items: uuid } })),
        responses: responses({ '200': json('The token with its secret', ISSUED_PAT) }, ['400', '401', '403']),
      },
    },
    '/user/pats/{id}/revoke': {
      parameters: [patId],
      post: {
        tags: tags('Personal access tokens'),
        summary: 'Revoke a personal access token',
        operationId: 'user.pats.revoke',
        responses: responses({ '200': json('The revoked token', PAT) }),
      },
    },
    '/user/pats/{id}/regenerate': {
      parameters: [patId],
      post: {
        tags: tags('Personal access tokens'),
        summary: 'A new secret for a personal access token; the old one stops working',
        operationId: 'user.pats.regenerate',
        responses: responses({ '200': json('The token with its new secret', ISSUED_PAT) }),
      },
    },
    '/roles/tree': {
      get: {
        tags: tags('Roles'),
        summary: 'The role hierarchy',
        operationId: 'roles.tree',
        responses: responses({ '200': json('The roles, each with its children', { type: 'array', items: { type: 'object' } }) }, ['401', '403']),
      },
    },
    '/workflow': {
      post: {
        tags: tags('Workflows'),
        summary: 'Start a workflow: requests sent with its Workflow-Id are written together on commit',
        operationId: 'workflow.start',
        responses: responses({ '200': json('The workflow', object({ message: string, workflowId: uuid })) }, ['401', '403']),
      },
    },
    '/workflow/commit': {
      post: {
        tags: tags('Workflows'),
        summary: "Commit a workflow: its requests' changes are written in one transaction",
        operationId: 'workflow.commit',
        parameters: WORKFLOW_HEADERS,
        responses: responses({ '200': json('Committed', object({ workflowId: uuid, committed: { const: true } })) }, ['400', '401', '403', '404', '409']),
      },
    },
    '/workflow/abort': {
      post: {
        tags: tags('Workflows'),
        summary: 'Abort a workflow: nothing it sent is written',
        operationId: 'workflow.abort',
        parameters: WORKFLOW_HEADERS,
        responses: responses({ '200': json('Aborted', object({ workflowId: uuid, aborted: { const: true } })) }),
      },
    },
    '/': {
      get: {
        tags: tags('Service'),
        summary: 'The service document: the entity sets',
        operationId: 'service.document',
        responses: responses({ '200': json('The entity sets', object({ '@odata.context': string, value: { type: 'array', items: object({ name: string, kind: string, url: string }, ['name', 'url']) } })) }, ['401']),
      },
    },
    '/$metadata': {
      get: {
        tags: tags('Service'),
        summary: 'The CSDL document: every type, set and method of the service',
        operationId: 'service.metadata',
        parameters: [{ name: '$format', in: 'query', required: false, description: '`json` for CSDL JSON', schema: { enum: ['xml', 'json'] } }],
        responses: responses(
          { '200': { description: 'CSDL XML, or CSDL JSON with $format=json', content: { 'application/xml': { schema: string }, 'application/json': { schema: { type: 'object' } } } } },
          ['401'],
        ),
      },
    },
    '/openapi.json': {
      get: {
        tags: tags('Service'),
        summary: 'This document',
        operationId: 'service.openapi',
        responses: responses({ '200': json('OpenAPI 3.1', { type: 'object' }) }, ['401']),
      },
    },
  }
}
