// What the workflow routes, their replay and the sweep are handed by the composition root
// (server/start.ts): what authentication and the OData routes need, since a workflow request
// passes through both, and the workflow options and counters.

import type { AuthServices } from '../auth/auth-services.ts'
import type { OdataServices } from '../odata/handlers/odata-services.ts'

export interface WorkflowServices extends AuthServices, OdataServices {
  readonly access: AuthServices['access']
}
