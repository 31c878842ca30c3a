// The bound entity model: every plugin's declarations, names resolved, references linked,
// columns named. One instance serves the binder, the SQL compiler, the serializer, $metadata,
// the persistence layer and the rules engine. Built once at start by loadModel().

import type {
  CollectionDecl,
  ComputedRule,
  CorrectionRule,
  DefaultRule,
  MethodDecl,
  OnDelete,
  ReferenceDecl,
  ResponsibilityDecl,
  ScalarDecl,
  ScalarType,
  ValidationRule,
} from './declarations.ts'

export interface ScalarProperty {
  readonly kind: 'scalar'
  /** Declared (PascalCase) name; the public name comes from the naming policy. */
  readonly name: string
  readonly type: ScalarType
  readonly decl: ScalarDecl
  /** Database column; undefined for virtual properties. */
  readonly column: string | undefined
  readonly entity: EntityModel
  /**
   * Set on the foreign key of a reference (Order.CustomerGuid for Order.Customer): the
   * reference's column, published so clients can read, filter and set it without $expand.
   */
  readonly foreignKeyOf?: ReferenceProperty
}

export interface ReferenceProperty {
  readonly kind: 'reference'
  readonly name: string
  readonly decl: ReferenceDecl
  readonly target: EntityModel
  readonly onDelete: OnDelete
  readonly required: boolean
  /** Foreign key column holding the target's Guid, `<Name>_Guid`. */
  readonly column: string
  readonly entity: EntityModel
}

export interface CollectionProperty {
  readonly kind: 'collection'
  readonly name: string
  readonly decl: CollectionDecl
  readonly target: EntityModel
  /** The reference on the target pointing back to this entity. */
  readonly inverse: ReferenceProperty
  readonly entity: EntityModel
}

export type PropertyModel = ScalarProperty | ReferenceProperty | CollectionProperty
export type NavigationProperty = ReferenceProperty | CollectionProperty

export interface EntityRules {
  readonly defaults: ReadonlyMap<string, DefaultRule>
  readonly corrections: ReadonlyMap<string, CorrectionRule>
  readonly computed: ReadonlyMap<string, ComputedRule>
  readonly validations: ReadonlyMap<string, ValidationRule>
}

export interface EntityModel {
  readonly name: string
  readonly setName: string
  readonly aliases: readonly string[]
  readonly table: string
  readonly label?: string
  readonly description?: string
  /** All properties by declared name, Guid and Title included. */
  readonly properties: ReadonlyMap<string, PropertyModel>
  readonly naturalKey: readonly string[]
  /** Each a list of keys: `Name`, `Name asc` or `Name desc` (indexKey). */
  readonly indexes: readonly (readonly string[])[]
  readonly rules: EntityRules
  readonly methods: ReadonlyMap<string, MethodDecl>
  /** The plugin file that declared it, for error messages. */
  readonly source: string
  /** true for Users, Roles, Responsibilities: served by the system, not a plugin. */
  readonly system: boolean
  /** The entity's name (and table) before a rename, which migrations carry out. */
  readonly renamedFrom?: string
}

export interface ResponsibilityModel extends ResponsibilityDecl {
  readonly name: string
  readonly source: string
}

export interface Model {
  readonly entities: ReadonlyMap<string, EntityModel>
  /** Entity set names and aliases, as declared (case sensitive). */
  readonly sets: ReadonlyMap<string, EntityModel>
  readonly responsibilities: ReadonlyMap<string, ResponsibilityModel>
  /** The plugin files the model was built from, with the version each declares (recorded by migrations). */
  readonly plugins?: readonly PluginSource[]
}

export interface PluginSource {
  readonly source: string
  readonly version?: string
}

/**
 * Whether clients create, change and delete the entity over the API. Responsibilities are
 * declared by plugins: `responsibility sync` owns their table, and the API only reads it.
 */
export function writableOverApi(entity: EntityModel): boolean {
  return !(entity.system && entity.name === 'Responsibility')
}

/** The generated tsvector column of an entity with searchable properties; never public, read by $search. */
export const SEARCH_COLUMN = '_Search'
/**
 * What separates the words of a search, in the column and in the query alike (a POSIX class of
 * PostgreSQL's regular expressions): white space and ASCII punctuation. Tenant databases use
 * the C locale, where [:alnum:] is ASCII alone, so "letters and digits" would have cut Иван,
 * 渡辺 or the ë of Zoë out of every word; anything outside ASCII stays part of its word.
 */
export const SEARCH_SEPARATORS = '[[:space:][:punct:]]+'

/** The properties `$search` looks in, in declaration order; none: the entity cannot be searched. */
export function searchableProperties(entity: EntityModel): ScalarProperty[] {
  return [...entity.properties.values()].filter((property): property is ScalarProperty => property.kind === 'scalar' && property.decl.searchable === true)
}

/** The column holding the row version; never public, surfaced as @odata.etag. */
export const VERSION_COLUMN = '_Version'
export const KEY = 'Guid'

/** A key of a declared index: the property, and the direction of the $orderby it serves, if any. */
export interface IndexKey {
  readonly property: string
  readonly direction?: 'asc' | 'desc'
}

/** `'OrderDate desc'` → { property: 'OrderDate', direction: 'desc' }; undefined when malformed. */
export function indexKey(text: string): IndexKey | undefined {
  const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?\s*$/.exec(text)
  if (!match) return undefined
  return match[2] ? { property: match[1], direction: match[2] as 'asc' | 'desc' } : { property: match[1] }
}
