// Which paths address a property or its raw value (`Customers(k)/Name`, `…/Name/$value`), for
// the body check that runs before the OData stage (http/odata-headers.ts): dispatch
// (odata-routes.ts) answers every write there by its method alone, 501 or 405, so the type of
// its body is no reason to refuse it. A raw value is even sent as text/plain.

import { DEFAULT_NAMESPACE as NAMESPACE } from '../metadata/build-csdl.ts'
import { parseResourcePath } from '../parser/resource-path-parser.ts'
import { bindPath } from '../semantic/bind-path.ts'
import type { OdataServices } from './odata-services.ts'

/** Whether `path` (`/api/…` or after it) binds to a property; false when it does not bind: the OData stage gives that error, after the body's check. */
export function addressesProperty(services: Pick<OdataServices, 'model' | 'naming'>, path: string): boolean {
  try {
    return bindPath(services.model, services.naming, parseResourcePath(path.replace(/^\/api\/?/i, '')), NAMESPACE).kind === 'property'
  } catch {
    return false
  }
}
