// A write as data: what it creates, changes, removes or calls, every name resolved, every
// value parsed and every permission checked (odata/write/bind-write.ts), before anything
// touches the database. A plan is plain JSON: a workflow stores its plans and rebuilds its
// state by applying them again (workflows/), and a $batch change set can concatenate the
// operations of its requests. Keys the plan does not give are generated when it is applied,
// from the unit of work's pins, so a pinned unit applies a plan to the same rows every time.
//
//   POST /Orders { "Number": 7, "Lines": [{ "Quantity": 1 }] }
//   → { format: 1, operations: [{ kind: 'create', entity: 'Order', values: { Number: 7 },
//        nested: [{ property: 'Lines', create: { kind: 'create', entity: 'OrderLine', values: { Quantity: 1 }, … } }], … }] }

/** The stored format of a plan: raised when its shape changes, so an old stored plan is refused by name. */
export const WRITE_PLAN_FORMAT = 1

export interface WritePlan {
  readonly format: typeof WRITE_PLAN_FORMAT
  readonly operations: readonly WriteOperation[]
}

export type WriteOperation = CreateOperation | UpdateOperation | DeleteOperation | CallOperation

/** Property values by declared name: scalars parsed, references as the target's key (or null). */
export type PlanValues = Readonly<Record<string, unknown>>

/** A new entity (deep insert: its nested new entities, and existing members it binds). */
export interface CreateOperation {
  readonly kind: 'create'
  readonly entity: string
  /** The key the client gave; generated when applied otherwise. */
  readonly key?: string
  readonly values: PlanValues
  /** New entities created with it: a reference's target, or a collection's member. */
  readonly nested: readonly { readonly property: string; readonly create: CreateOperation }[]
  /** Existing entities bound as members of its collections (`Lines@odata.bind`). */
  readonly members: readonly { readonly property: string; readonly keys: readonly string[] }[]
  /**
   * Created through a parent's collection (`POST Customers(k)/Orders`): the parent, which must
   * exist (404 otherwise); the reference back to it is among `values`. Absent in older plans.
   */
  readonly parent?: { readonly entity: string; readonly key: string; readonly property: string }
}

export interface UpdateOperation {
  readonly kind: 'update'
  readonly entity: string
  readonly key: string
  /** A PUT replaces: its values hold null for every property the body left out. */
  readonly mode: 'patch' | 'put'
  readonly values: PlanValues
  /** If-Match's entity tags; absent for none or `*`. */
  readonly ifMatch?: readonly string[]
  /** If-None-Match's entity tags (`*`: any); absent for none, and in older plans. */
  readonly ifNoneMatch?: readonly string[]
  /** A link set through `$ref` names an entity that must exist (404 otherwise). Absent in older plans. */
  readonly exists?: { readonly entity: string; readonly key: string }
  /** A link removed through `$ref`: the reference must point at `key` now (404 otherwise). */
  readonly linkedTo?: { readonly property: string; readonly key: string }
  /**
   * A link set through a collection's `$ref` (`POST Racks(k)/Books/$ref`): the entity updated is
   * the member the body named, bound into `property` of `entity`. Naming it needs read on its
   * type, as every bind does (authorize.ts). Absent in older plans.
   */
  readonly boundInto?: { readonly entity: string; readonly property: string }
}

export interface DeleteOperation {
  readonly kind: 'delete'
  readonly entity: string
  readonly key: string
  readonly ifMatch?: readonly string[]
  readonly ifNoneMatch?: readonly string[]
}

/** A plugin method, static or bound to `key`, with its parameters parsed. */
export interface CallOperation {
  readonly kind: 'call'
  readonly entity: string
  readonly method: string
  readonly key?: string
  /** If-Match on the entity a bound method is called on. */
  readonly ifMatch?: readonly string[]
  readonly params: Readonly<Record<string, unknown>>
  /** A read method (function): its unit of work must change nothing. */
  readonly readOnly: boolean
}

/** What applying a plan gives back: per operation, the key it created or the value its method returned (entities as { Guid }). */
export interface PlanResult {
  readonly results: readonly unknown[]
  /** Per operation, its entity's ETag once written (writes only; run-plan.ts). */
  readonly etags?: readonly (string | undefined)[]
}

export function writePlan(operations: readonly WriteOperation[]): WritePlan {
  return { format: WRITE_PLAN_FORMAT, operations }
}

/** Whether applying the plan changes nothing (only read methods): it runs on a read-only unit. */
export function isReadOnly(plan: WritePlan): boolean {
  return plan.operations.every((operation) => operation.kind === 'call' && operation.readOnly)
}
