// What a plugin declares, as plain data. The loader turns these into the bound model
// (model.ts); nothing here runs plugin code, so $metadata, the database schema and the
// permission table can be built from declarations alone.

export type ScalarType =
  | 'Text'
  | 'ProperNoun'
  | 'MultilineText'
  | 'Email'
  | 'Integer'
  | 'Decimal'
  | 'Double'
  | 'Boolean'
  | 'Date'
  | 'DateTimeOffset'
  | 'TimeOfDay'
  | 'Guid'
  | 'Enum'

export type OnDelete = 'cascade' | 'restrict' | 'setNull'

export interface ScalarDecl {
  readonly kind: 'scalar'
  readonly type: ScalarType
  readonly required: boolean
  readonly maxLength?: number
  readonly precision?: number
  readonly scale?: number
  readonly min?: number
  readonly max?: number
  /** Allowed values of an Enum property, in declaration order. */
  readonly values?: readonly string[]
  readonly label?: string
  readonly description?: string
  /** Virtual properties are computed after loading and never stored. */
  readonly virtual: boolean
  /** Stored encrypted with the tenant's EncryptionKey; cannot be filtered or sorted on. */
  readonly encrypted: boolean
  /** The name this property had before: its column is renamed, keeping its values. */
  readonly renamedFrom?: string
  /** Part of the entity's full-text index, found by $search (text properties only). */
  readonly searchable?: boolean
}

export interface ReferenceDecl {
  readonly kind: 'reference'
  readonly target: string
  readonly required: boolean
  readonly onDelete: OnDelete
  readonly label?: string
  readonly description?: string
  /** The name this reference had before: its foreign key column is renamed, keeping its values. */
  readonly renamedFrom?: string
}

export interface CollectionDecl {
  readonly kind: 'collection'
  readonly target: string
  /** The reference property on the target entity that points back here. */
  readonly via: string
  readonly label?: string
  readonly description?: string
}

export type PropertyDecl = ScalarDecl | ReferenceDecl | CollectionDecl

/** A value as plugins see it: entities are plain objects keyed by property name. */
export type EntityData = Record<string, any>

export interface RuleContext {
  /** The entity as it was loaded from the database, or undefined for a new one. */
  readonly before: Readonly<EntityData> | undefined
  /** Today's date as YYYY-MM-DD (UTC). */
  readonly today: string
  readonly now: Date
  /** Loads entities inside the same session, seeing the writes not yet committed. */
  readonly find: FindFunction
}

export type FindFunction = (entity: string, where?: Record<string, unknown>) => Promise<EntityData[]>

export type DefaultRule = (entity: EntityData, context: RuleContext) => unknown | Promise<unknown>
export type CorrectionRule = (value: any, entity: EntityData) => unknown
export type ValidationRule = (entity: EntityData, context: RuleContext) => true | string | Promise<true | string>

export interface ComputedRule {
  /** Property paths the value depends on: 'Quantity', 'Lines.LineTotal', 'Order.Title'. */
  readonly from: readonly string[]
  readonly value: (entity: EntityData, context: RuleContext) => unknown
  /**
   * Set by sumOf: the value is the sum of `property` over the members of `collection`, so a
   * write moves the stored sum by what it changed of those members (rules/moved-sums.ts)
   * instead of reading them all.
   */
  readonly sumOf?: { readonly collection: string; readonly property: string }
}

export type MethodKind = 'read' | 'modify'

/**
 * What a method gets besides its parameters: an instance method receives the entity, then
 * its parameters and this context in one object; a static one its parameters, then this.
 *
 * ### Examples
 * ```ts
 * Lend: method.modify('Lends the book to a reader', { params: { reader: p.text().required() }, returns: p.reference('Loan') },
 *   (book, { reader, create, refuse }) => {
 *     if (!book.Available) refuse(`${book.Name} is not available`)
 *     book.Available = false
 *     return create('Loan', { Book: book, Reader: reader })
 *   }),
 * ```
 */
export interface MethodContext {
  readonly find: FindFunction
  readonly now: Date
  /** Today's date as YYYY-MM-DD (UTC). */
  readonly today: string
  /** The caller; absent when no user calls (the CLI). */
  readonly user?: { readonly guid: string; readonly username: string }
  /**
   * Declines the call: the client gets 400 MethodRefused with `message` (and `target`, a
   * parameter or property it concerns), and nothing the call changed is saved. Never returns.
   */
  readonly refuse: (message: string, target?: string) => never
  /**
   * A new entity of the named type with these values (references as an entity or its Guid),
   * saved with the call's other changes once the rules (defaults, corrections, computed
   * values, validations) have run on it. Its Guid is generated. Modify methods only.
   */
  readonly create: (entity: string, values?: Record<string, unknown>) => EntityData
  /**
   * Deletes an entity the method found or created, as DELETE does: what references it with
   * onDelete 'cascade' goes too, 'setNull' is cleared, 'restrict' refuses the call. Modify methods only.
   */
  readonly remove: (entity: EntityData) => void
}

export interface MethodDecl {
  readonly kind: MethodKind
  readonly description: string
  readonly static: boolean
  readonly params: Readonly<Record<string, PropertyDecl & { readonly default?: unknown }>>
  /** undefined: the method returns nothing. */
  readonly returns?: PropertyDecl
  /** Static: (parameters, context); instance: (entity, { ...parameters, ...context }). */
  readonly run: (input: any, context: MethodContext & Record<string, any>) => unknown | Promise<unknown>
}

export interface EntityDecl {
  readonly name: string
  /** Canonical entity set name; by default the plural of the name. */
  readonly setName?: string
  /** Further names that reach the same set; by default the singular name. */
  readonly aliases?: readonly string[]
  readonly label?: string
  readonly description?: string
  readonly naturalKey?: readonly string[]
  readonly properties: Readonly<Record<string, PropertyDecl>>
  readonly defaults?: Readonly<Record<string, DefaultRule>>
  readonly corrections?: Readonly<Record<string, CorrectionRule>>
  readonly computed?: Readonly<Record<string, ComputedRule>>
  readonly validations?: Readonly<Record<string, ValidationRule>>
  readonly methods?: Readonly<Record<string, MethodDecl>>
  /**
   * Extra indexes an integrator wants for their queries: each a list of keys, a property name
   * (`'Status'`) or a property name with the direction of an `$orderby` it should serve
   * (`'OrderDate desc'`, `'Nickname asc'`: nulls sorted as `$orderby` sorts them).
   */
  readonly indexes?: readonly (readonly string[])[]
  /** The name this entity had before: its table is renamed, keeping its rows. */
  readonly renamedFrom?: string
}

/** Permissions on one entity: 'read' | 'create' | 'update' | 'delete' | 'execute:<Method>'. */
export type Permission = 'read' | 'create' | 'update' | 'delete' | `execute:${string}`

export interface ResponsibilityDecl {
  readonly description?: string
  readonly permissions: Readonly<Record<string, readonly Permission[]>>
}

export interface PluginDecl {
  /** The plugin's own version, recorded with every migration it causes (`_Migration`). */
  readonly version?: string
  readonly entities: readonly EntityDecl[]
  readonly responsibilities?: Readonly<Record<string, ResponsibilityDecl | Readonly<Record<string, readonly Permission[]>>>>
}
