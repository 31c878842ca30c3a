// The only surface plugins import ('entityctl/plugin'). Everything here builds plain
// declarations (model/declarations.ts); the loader validates and binds them at start.
//
// ### Example
// ```ts
// import { entity, p, plugin } from 'entityctl/plugin'
//
// const Customer = entity('Customer', {
//   properties: {
//     Name:    p.properNoun().required().maxLength(100),
//     Country: p.text().maxLength(2),
//     Orders:  p.many('Order').via('Customer'),
//   },
//   corrections: { Country: (code) => code.trim().toUpperCase() },
//   computed:    { Title: { from: ['Name'], value: (c) => c.Name } },
// })
// export default plugin({ entities: [Customer] })
// ```

import type {
  CollectionDecl,
  ComputedRule,
  EntityData,
  EntityDecl,
  MethodDecl,
  OnDelete,
  PluginDecl,
  PropertyDecl,
  ReferenceDecl,
  ScalarDecl,
  ScalarType,
} from './model/declarations.ts'
import { closestName } from './errors.ts'

export type * from './model/declarations.ts'

/** A scalar property under construction; every call returns a new builder. */
export class ScalarBuilder {
  readonly decl: ScalarDecl
  constructor(decl: ScalarDecl) {
    this.decl = decl
  }
  private with(change: Partial<ScalarDecl>): ScalarBuilder {
    return new ScalarBuilder({ ...this.decl, ...change })
  }
  /** Must have a value on save (a non-nullable column). */
  required(): ScalarBuilder {
    return this.with({ required: true })
  }
  maxLength(length: number): ScalarBuilder {
    return this.with({ maxLength: length })
  }
  /** Smallest allowed value, checked on every write. */
  min(value: number): ScalarBuilder {
    return this.with({ min: value })
  }
  /** Largest allowed value, checked on every write. */
  max(value: number): ScalarBuilder {
    return this.with({ max: value })
  }
  /** Restricts a text property to these values, published as an enumeration type. */
  oneOf(...values: string[]): ScalarBuilder {
    return this.with({ type: 'Enum', values })
  }
  /** Shown as Common.Label in $metadata. */
  label(text: string): ScalarBuilder {
    return this.with({ label: text })
  }
  /** Shown as Core.Description in $metadata. */
  description(text: string): ScalarBuilder {
    return this.with({ description: text })
  }
  /** Computed after loading, never stored: selectable, but not usable in $filter or $apply. */
  virtual(): ScalarBuilder {
    return this.with({ virtual: true })
  }
  /** Stored encrypted with the tenant's EncryptionKey. */
  encrypted(): ScalarBuilder {
    return this.with({ encrypted: true })
  }
  /**
   * The property's name before a rename: migrations rename its column instead of dropping
   * it and adding an empty one. Keep it until every tenant has been migrated.
   *
   * ```ts
   * Email: p.email().renamedFrom('Mail'),
   * ```
   */
  renamedFrom(previousName: string): ScalarBuilder {
    return this.with({ renamedFrom: previousName })
  }
  /**
   * Found by `$search`: the entity's searchable text properties feed one full-text index.
   *
   * ### Examples
   * ```ts
   * Name: p.properNoun().required().searchable(),   // GET /api/Customers?$search=lovelace
   * ```
   */
  searchable(): ScalarBuilder {
    return this.with({ searchable: true })
  }
}

export class ReferenceBuilder {
  readonly decl: ReferenceDecl
  constructor(decl: ReferenceDecl) {
    this.decl = decl
  }
  required(): ReferenceBuilder {
    return new ReferenceBuilder({ ...this.decl, required: true })
  }
  /** What happens to this entity when the referenced one is deleted. Default: restrict. */
  onDelete(action: OnDelete): ReferenceBuilder {
    return new ReferenceBuilder({ ...this.decl, onDelete: action })
  }
  label(text: string): ReferenceBuilder {
    return new ReferenceBuilder({ ...this.decl, label: text })
  }
  description(text: string): ReferenceBuilder {
    return new ReferenceBuilder({ ...this.decl, description: text })
  }
  /** The reference's name before a rename: its foreign key column is renamed, keeping its values. */
  renamedFrom(previousName: string): ReferenceBuilder {
    return new ReferenceBuilder({ ...this.decl, renamedFrom: previousName })
  }
}

export class CollectionBuilder {
  readonly decl: CollectionDecl
  constructor(decl: CollectionDecl) {
    this.decl = decl
  }
  /** Names the reference property on the target that points back to this entity. */
  via(reference: string): CollectionBuilder {
    return new CollectionBuilder({ ...this.decl, via: reference })
  }
  label(text: string): CollectionBuilder {
    return new CollectionBuilder({ ...this.decl, label: text })
  }
  description(text: string): CollectionBuilder {
    return new CollectionBuilder({ ...this.decl, description: text })
  }
}

export type PropertyBuilder = ScalarBuilder | ReferenceBuilder | CollectionBuilder

/**
 * A builder's declaration, or what was given in its place (a declaration written out, or a
 * mistake such as 'text'), for the loader to check and name.
 */
function declOf<T>(value: PropertyBuilder | T): PropertyDecl | T {
  return typeof value === 'object' && value !== null && 'decl' in value ? value.decl : value
}

function scalar(type: ScalarType, extra: Partial<ScalarDecl> = {}): ScalarBuilder {
  return new ScalarBuilder({ kind: 'scalar', type, required: false, virtual: false, encrypted: false, ...extra })
}

/** Property builders. */
export const p = {
  text: () => scalar('Text'),
  properNoun: () => scalar('ProperNoun'),
  multilineText: () => scalar('MultilineText'),
  email: () => scalar('Email', { maxLength: 254 }),
  integer: () => scalar('Integer'),
  decimal: (precision = 18, scale = 2) => scalar('Decimal', { precision, scale }),
  double: () => scalar('Double'),
  boolean: () => scalar('Boolean'),
  date: () => scalar('Date'),
  dateTime: () => scalar('DateTimeOffset'),
  timeOfDay: () => scalar('TimeOfDay'),
  guid: () => scalar('Guid'),
  enumeration: (...values: string[]) => scalar('Enum', { values }),
  /** A reference to one entity of the named type (stored as a foreign key). */
  reference: (target: string) => new ReferenceBuilder({ kind: 'reference', target, required: false, onDelete: 'restrict' }),
  /** The entities of the named type whose reference `via` points here. */
  many: (target: string) => new CollectionBuilder({ kind: 'collection', target, via: '' }),
}

export interface EntityOptions extends Omit<EntityDecl, 'name' | 'properties' | 'methods'> {
  readonly properties: Readonly<Record<string, PropertyBuilder | PropertyDecl>>
  readonly methods?: Readonly<Record<string, MethodDecl>>
}

/** Declares an entity. Guid (the key) and Title exist on every entity without being declared. */
export function entity(name: string, options: EntityOptions): EntityDecl {
  const properties = Object.fromEntries(
    Object.entries(options.properties).map(([key, value]) => [key, declOf(value)]),
  ) as Record<string, PropertyDecl>
  return { ...options, name, properties }
}

export interface MethodOptions {
  /** A static method is called on the set (`/api/Orders/Name`), an instance one on an entity. */
  readonly static?: boolean
  readonly params?: Readonly<Record<string, PropertyBuilder | (PropertyDecl & { default?: unknown })>>
  readonly returns?: PropertyBuilder | PropertyDecl
}

const METHOD_OPTIONS = ['static', 'params', 'returns']

function declareMethod(kind: 'read' | 'modify') {
  return (description: string, optionsOrRun: MethodOptions | MethodDecl['run'], maybeRun?: MethodDecl['run']): MethodDecl => {
    const options = typeof optionsOrRun === 'function' ? {} : (optionsOrRun ?? {})
    const run = typeof optionsOrRun === 'function' ? optionsOrRun : maybeRun!
    // The options are gone once declared: a misspelt one is said here, where the file runs,
    // so the load names its line.
    for (const option of Object.keys(options)) {
      if (METHOD_OPTIONS.includes(option)) continue
      const hint = closestName(option, METHOD_OPTIONS)
      throw new Error(`method.${kind}: '${option}' is no option of a method (${METHOD_OPTIONS.join(', ')})${hint ? `; did you mean ${hint}?` : ''}`)
    }
    const params = Object.fromEntries(Object.entries(options.params ?? {}).map(([key, value]) => [key, declOf(value)]))
    const returns = options.returns && declOf(options.returns)
    return { kind, description, static: options.static ?? false, params: params as MethodDecl['params'], returns: returns as PropertyDecl | undefined, run }
  }
}

/**
 * Methods become OData functions (read, GET) and actions (modify, POST).
 *
 * ```ts
 * Close: method.modify('Closes the order', (order) => { order.Status = 'Closed' }),
 * ```
 */
export const method = {
  read: declareMethod('read'),
  modify: declareMethod('modify'),
}

/** Declares a plugin: its entities and the responsibilities that grant access to them. */
export function plugin(decl: PluginDecl): PluginDecl {
  return decl
}

/**
 * A computed property that is the sum of a number over a collection's members, none counting
 * as 0: `computed: { Total: sumOf('Lines', 'LineTotal') }`. The value of
 * `{ from: ['Lines.LineTotal'], value: (order) => sum(order.Lines, (line) => line.LineTotal) }`,
 * kept more cheaply: a write that changes, adds, moves or removes members moves the stored sum
 * by what it changed (a line's new total less its old one), without reading the other members.
 */
export function sumOf(collection: string, property: string): ComputedRule {
  return {
    from: [`${collection}.${property}`],
    value: (entity) => {
      let total = 0
      for (const member of (entity[collection] as EntityData[] | undefined) ?? []) total += Number(member[property] ?? 0)
      return total
    },
    sumOf: { collection, property },
  }
}

/** Sums a number over a collection, as decimals are summed: in cents, without float drift. */
export function sum<T extends EntityData>(items: readonly T[] | undefined, value: (item: T) => unknown): number {
  let total = 0
  for (const item of items ?? []) total += Number(value(item) ?? 0)
  return Math.round(total * 100) / 100
}
