import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function openapiCommand(): Command {
  return withJson(
    new Command('openapi').description(
      'Print the OpenAPI 3.1 document of the service (the one GET /api/openapi.json serves), made from the plugins and the config; no database needed.',
    ),
  ).action(lazy(() => import('../actions/openapi.ts'), 'openapi'))
}
