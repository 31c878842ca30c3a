// Orders an entity's computed properties so a value that feeds another is computed first,
// and refuses a cycle at start, naming the properties in it (issue: rules run in a defined
// order; a rule cycle is refused at start).

import type { EntityModel } from './model.ts'
import { PluginError } from './plugin-error.ts'

const orders = new WeakMap<EntityModel, readonly string[]>()

/** Computed property names of the entity, each after the computed ones it reads (sorted once). */
export function computedOrder(entity: EntityModel): readonly string[] {
  let order = orders.get(entity)
  if (!order) orders.set(entity, (order = sortComputed(entity)))
  return order
}

function sortComputed(entity: EntityModel): string[] {
  const computed = entity.rules.computed
  const ordered: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name].map((n) => `${entity.name}.${n}`)
      throw new PluginError(entity.source, `${entity.name}.computed`, `rule cycle: ${cycle.join(' → ')}`)
    }
    state.set(name, 'visiting')
    for (const source of computed.get(name)!.from) {
      const local = source.split('.')[0]
      if (!source.includes('.') && computed.has(local) && local !== name) visit(local, [...trail, name])
      if (local === name) {
        throw new PluginError(entity.source, `${entity.name}.computed.${name}`, 'a computed property cannot depend on itself')
      }
    }
    state.set(name, 'done')
    ordered.push(name)
  }
  for (const name of computed.keys()) visit(name, [])
  return ordered
}

export function checkRuleOrder(entity: EntityModel): void {
  for (const [name, rule] of entity.rules.computed) {
    if (!Array.isArray(rule.from)) {
      throw new PluginError(entity.source, `${entity.name}.computed.${name}`, "needs from: ['Property', 'Nav.Property', ...]")
    }
    for (const source of rule.from) {
      const [head, ...rest] = source.split('.')
      const property = entity.properties.get(head)
      if (!property) {
        throw new PluginError(entity.source, `${entity.name}.computed.${name}`, `depends on unknown property '${head}'`)
      }
      if (rest.length > 0 && property.kind === 'scalar') {
        throw new PluginError(entity.source, `${entity.name}.computed.${name}`, `'${head}' is not a navigation property`)
      }
      if (rest.length > 0 && property.kind !== 'scalar' && !property.target.properties.has(rest[0])) {
        throw new PluginError(entity.source, `${entity.name}.computed.${name}`, `${property.target.name} has no property '${rest[0]}'`)
      }
    }
  }
  computedOrder(entity)
}
