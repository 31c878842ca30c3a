// What rules and methods see of an entity: a plain-looking object over its entry in the unit
// of work. Scalars read as JSON-like values (decimals as numbers, dates as 'YYYY-MM-DD'),
// references as views of the loaded target ({ Guid } when not loaded), collections as
// arrays of views. Writing a scalar (or a reference, as its Guid or the entity) writes the
// entry, so the flush sees the change.

import { PluginError } from '../errors.ts'
import type { EntityModel, Model } from '../model/model.ts'
import { GUID_PATTERN } from '../persistence/guid.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'
import { pluginValue } from './plugin-call.ts'
import { toRuleValue } from './values.ts'
import { jsonExcerpt } from './json-excerpt.ts'

const ENTRY = Symbol('entry')

/**
 * The plugin code writing through a scope's views (`method Order.Close`) and the parameters
 * its caller gave it: a reference it sets to one of those Guids is set by the caller.
 */
export interface ViewWriter {
  readonly what: string
  readonly params: Readonly<Record<string, unknown>>
}

export type EntityView = Record<string, any>

/**
 * Views of one unit of work. The rules engine gives collections their members explicitly
 * (stored ones, plus entities created or moved in by this unit, minus removed ones), so rules
 * see the state being saved.
 */
export class ViewScope {
  readonly unit: UnitOfWork
  readonly #writer: ViewWriter | undefined
  readonly #views = new WeakMap<Entry, EntityView>()
  readonly #collections = new WeakMap<Entry, Map<string, readonly Entry[]>>()

  /** Set while the rules engine reads through the views itself (unobserved): what it reads is no plugin code's. */
  #unobserved = false

  constructor(unit: UnitOfWork, writer?: ViewWriter) {
    this.unit = unit
    this.#writer = writer
  }

  /** Runs `read`, the rules engine's own reading (the declared constraints), without telling the unit what it read. */
  unobserved<T>(read: () => T): T {
    this.#unobserved = true
    try {
      return read()
    } finally {
      this.#unobserved = false
    }
  }

  /** Plugin code read a sum of `entry` (a sumOf): the unit writes it over the version read (UnitOfWork.sumRead). */
  readSum(entry: Entry): void {
    if (!this.#unobserved) this.unit.sumRead(entry)
  }

  /** Records who set the reference `property` of `entry` through a view (`what`: as a fault would name the setting). */
  setReference(entry: Entry, property: string, what: string): void {
    const key = entry.values[property]
    if (typeof key !== 'string') return
    const given = this.#writer && Object.entries(this.#writer.params).find(([, value]) => typeof value === 'string' && value.toLowerCase() === key)
    this.unit.setReferenceBy(entry, property, given ? { what: this.#writer!.what, parameter: given[0] } : { what: this.#writer?.what ?? what })
  }

  get model(): Model {
    return this.unit.model
  }

  view(entry: Entry): EntityView {
    let view = this.#views.get(entry)
    if (!view) this.#views.set(entry, (view = viewOf(this, entry)))
    return view
  }

  setCollection(entry: Entry, navigation: string, members: readonly Entry[]): void {
    let byName = this.#collections.get(entry)
    if (!byName) this.#collections.set(entry, (byName = new Map()))
    byName.set(navigation, members)
  }

  collection(entry: Entry, navigation: string): readonly Entry[] | undefined {
    return this.#collections.get(entry)?.get(navigation)
  }
}

function viewOf(scope: ViewScope, entry: Entry): EntityView {
  const meta = entry.entity
  return new Proxy(entry as unknown as Record<string | symbol, any>, {
    get(_target, key) {
      if (key === ENTRY) return entry
      if (typeof key !== 'string') return undefined
      const property = meta.properties.get(key)
      if (!property) return undefined
      if (property.kind === 'scalar') {
        if (meta.rules.computed.get(key)?.sumOf) scope.readSum(entry)
        return toRuleValue(property, entry.values[property.foreignKeyOf?.name ?? key])
      }
      if (property.kind === 'reference') {
        const targetKey = entry.values[key]
        if (typeof targetKey !== 'string') return undefined
        const target = scope.unit.get(property.target, targetKey)
        return target && target.state !== 'stub' ? scope.view(target) : { Guid: targetKey }
      }
      return scope.collection(entry, key)?.map((member) => scope.view(member))
    },
    set(_target, key, value) {
      const property = typeof key === 'string' ? meta.properties.get(key) : undefined
      const what = `code setting ${meta.name}.${String(key)}`
      if (property?.kind === 'reference') {
        entry.values[property.name] = referenceKey(what, property.target, value)
        scope.setReference(entry, property.name, what)
        return true
      }
      if (property?.kind !== 'scalar' || property.decl.virtual) {
        throw PluginError.fault(what, 'set what rules and methods cannot: stored scalar properties and references are writable, collections and virtual properties are not')
      }
      entry.values[property.foreignKeyOf?.name ?? property.name] = pluginValue(what, `${meta.name}.${property.name}`, property.decl, value)
      return true
    },
    has: (_target, key) => typeof key === 'string' && meta.properties.has(key),
    ownKeys: () => [...meta.properties.keys()],
    getOwnPropertyDescriptor: (_target, key) =>
      typeof key === 'string' && meta.properties.has(key) ? { enumerable: true, configurable: true } : undefined,
  })
}

/** A reference set from code, as its Guid (or the entity, or null), the way find takes one. */
export function referenceKey(what: string, target: EntityModel, value: unknown): string | null {
  if (value === null || value === undefined) return null
  const related = typeof value === 'object' ? entryOf(value) : undefined
  if (related) {
    if (related.entity === target) return related.key
    throw PluginError.fault(what, `set an entity of ${related.entity.name}, but the reference is to ${target.name}`)
  }
  if (typeof value === 'string' && GUID_PATTERN.test(value)) return value.toLowerCase()
  throw PluginError.fault(what, `set ${jsonExcerpt(value)}: a reference takes a ${target.name}, its Guid or null`)
}

/** The entry behind a view. */
export function entryOf(view: object): Entry | undefined {
  return (view as Record<symbol, Entry | undefined>)[ENTRY]
}
