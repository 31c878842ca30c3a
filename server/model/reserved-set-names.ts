// The first segments of paths under /api that are not entity sets: the fixed routes' (sign-in,
// PATs, role tree, workflows, explorer, OpenAPI) and OData's own. The router sends a path whose
// first segment begins a fixed route there before the OData stages see it, and compares
// case-insensitively (http/app.ts), so an entity set or alias named like one would be shadowed:
// POST /api/Workflow would begin a workflow, not create an entity. The loader refuses such a
// name (build-model.ts), and the app refuses to start a fixed route whose segment is not here.

interface ReservedSegment {
  /** What the segment is, for the loader's message. */
  readonly what: string
  /**
   * The system entity whose set name or alias it also is: the routes under it hang beneath that
   * set (/api/roles/tree beside /api/roles/$count), and any other path there is OData's.
   */
  readonly owner?: string
}

/** By lower-case segment. */
const RESERVED = new Map<string, ReservedSegment>([
  ['$metadata', { what: 'the metadata document' }],
  ['$batch', { what: 'batch requests' }],
  ['auth', { what: 'sign-in and refresh' }],
  ['user', { what: "the signed-in user's PATs", owner: 'User' }],
  ['roles', { what: 'the role tree', owner: 'Role' }],
  ['workflow', { what: 'workflows' }],
  ['explorer', { what: 'the API explorer' }],
  ['openapi.json', { what: 'the OpenAPI document' }],
])

/**
 * Why an entity set or alias may not be `name`, as `/api/workflow is a fixed route (workflows)`;
 * undefined when it may. `entity` the entity that would have it, `system` whether that is a
 * system entity.
 */
export function reservedSetName(name: string, entity: string, system: boolean): string | undefined {
  const segment = name.toLowerCase()
  const reserved = RESERVED.get(segment)
  if (!reserved || (system && reserved.owner === entity)) return undefined
  return `/api/${segment} is a fixed route (${reserved.what})`
}

/** Whether `segment`, the first of a fixed route under /api, is reserved here. */
export function isReservedSegment(segment: string): boolean {
  return RESERVED.has(segment.toLowerCase())
}
