// What a plugin method gets besides its parameters (model/declarations.ts MethodContext): the
// rules' find, now and today, the caller, and what only a method may do: refuse the call,
// create entities and delete them. All of it acts on the method's unit of work, so what a
// method creates or deletes is flushed with its other changes through the same rules and
// the same one statement as any write; no second write path exists.
//
//   (book, { reader, create, refuse }) => {
//     if (!book.Available) refuse(`${book.Name} is not available`)   → 400 MethodRefused, nothing saved
//     return create('Loan', { Book: book, Reader: reader })          → inserted with the book's change
//   }

import { closestName, MethodError, PluginError } from '../errors.ts'
import type { MethodContext, MethodDecl } from '../model/declarations.ts'
import { KEY } from '../model/model.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'
import { entryOf, type EntityView, type ViewScope } from './entity-view.ts'
import { findViews } from './find.ts'
import { jsonExcerpt } from './json-excerpt.ts'

/** What deleting an entity takes besides marking it: its references' onDelete (writes/apply-plan.ts). */
export type RemoveWithCascades = (entry: Entry) => Promise<void>

export interface MethodScope {
  readonly unit: UnitOfWork
  readonly views: ViewScope
  /** `method Order.Close`, as its faults name it. */
  readonly what: string
  readonly method: MethodDecl
  readonly user?: { readonly guid: string; readonly username: string }
}

/**
 * The context of one call, and `settle`, which carries out what its deletes reach once the
 * method has returned: a plugin's `remove(book)` reads as a plain statement, without await.
 */
export function methodContext(scope: MethodScope, removeWithCascades: RemoveWithCascades): { context: MethodContext; settle(): Promise<void> } {
  const { unit, views, what, method } = scope
  const removed: Entry[] = []
  // A read method may not write; it is refused at the first attempt, not after it has run on.
  const writing = (operation: string) => {
    if (method.kind === 'read') throw MethodError.readOnly()
    return `${what} (its ${operation})`
  }
  const context: MethodContext = {
    find: (type, where) => findViews(unit, views, type, where),
    now: unit.now,
    today: unit.now.toISOString().slice(0, 10),
    user: scope.user,
    refuse: (message, target) => {
      if (typeof message !== 'string' || message.trim() === '') throw PluginError.fault(what, 'called refuse without a message; give the reason the client is to read')
      throw MethodError.refused(message, typeof target === 'string' && target !== '' ? publicPath(unit, target) : undefined)
    },
    create: (type, values = {}) => createEntity(scope, writing(`create('${type}')`), type, values),
    remove: (view) => {
      const doing = writing('remove')
      const entry = view && typeof view === 'object' ? entryOf(view) : undefined
      if (!entry) throw PluginError.fault(doing, `removed ${jsonExcerpt(view)}: remove takes an entity the method was given, found or created`)
      if (entry.removed) return
      unit.remove(entry)
      removed.push(entry)
    },
  }
  return {
    context,
    async settle() {
      for (const entry of removed) await removeWithCascades(entry)
    },
  }
}

/** A new entry of `type` with `values` set as a method sets them (entity-view.ts checks each). */
function createEntity(scope: MethodScope, what: string, type: string, values: Record<string, unknown>): EntityView {
  const { unit, views } = scope
  const entity = unit.model.entities.get(type)
  if (!entity) {
    const hint = closestName(type, unit.model.entities.keys())
    throw PluginError.fault(what, `names no entity${hint ? `; did you mean '${hint}'?` : ''}`)
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw PluginError.fault(what, 'gave values that are not an object of properties')
  if (KEY in values) throw PluginError.fault(what, `gave a ${KEY}: a new entity's ${KEY} is generated; read it from what create returns`)
  const view = views.view(unit.create(entity, unit.newGuid()))
  for (const [name, value] of Object.entries(values)) {
    const property = entity.properties.get(name)
    if (property?.kind === 'collection') {
      throw PluginError.fault(what, `gave ${name}, a collection: create its members, each with its ${property.inverse.name} set to the new ${entity.name}`)
    }
    view[name] = value
  }
  return view
}

/** A target as the plugin names it (`Lines/1/Quantity`, `copies`), in the names the API's clients use. */
function publicPath(unit: UnitOfWork, target: string): string {
  return target
    .split('/')
    .map((segment) => (/^\d+$/.test(segment) ? segment : unit.publicName(segment)))
    .join('/')
}
