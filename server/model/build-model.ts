// Binds plugin declarations into the Model: adds Guid and Title, names sets and columns,
// links references and collections, and checks everything a typo could break. A wrong
// plugin stops the start with its file, entity and property named (PluginError).

import type { ComputedRule, EntityDecl, PluginDecl, PropertyDecl, ResponsibilityDecl, ScalarDecl } from './declarations.ts'
import type {
  CollectionProperty,
  EntityModel,
  Model,
  PropertyModel,
  ReferenceProperty,
  ResponsibilityModel,
  ScalarProperty,
} from './model.ts'
import { indexKey, KEY } from './model.ts'
import { checkRuleOrder } from './rule-order.ts'
import { pluralize } from './naming.ts'
import { PluginError } from './plugin-error.ts'
import { closestName } from '../errors.ts'
import { hasControlCharacter, noControlCharacters } from './control-characters.ts'
import { reservedSetName } from './reserved-set-names.ts'

export { PluginError }

export interface LoadedPlugin {
  readonly source: string
  readonly decl: PluginDecl
}

const SCALAR_TYPES = new Set([
  'Text', 'ProperNoun', 'MultilineText', 'Email', 'Integer', 'Decimal', 'Double',
  'Boolean', 'Date', 'DateTimeOffset', 'TimeOfDay', 'Guid', 'Enum',
])
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
const RESERVED_PARAMETERS = new Set(['filter', 'orderby', 'select', 'expand', 'top', 'skip', 'count', 'apply', 'search', 'format', 'skiptoken', 'compute', 'levels', 'index', 'id', 'schemaversion', 'deltatoken'])
const PLUGIN_OPTIONS = ['version', 'entities', 'responsibilities']
const ENTITY_OPTIONS = [
  'name', 'properties', 'setName', 'aliases', 'label', 'description', 'naturalKey', 'indexes',
  'defaults', 'corrections', 'computed', 'validations', 'methods', 'renamedFrom',
]
/** The types whose values $search finds words in. */
const TEXT_TYPES = new Set(['Text', 'ProperNoun', 'MultilineText', 'Email', 'Enum'])

const GUID_DECL: ScalarDecl = { kind: 'scalar', type: 'Guid', required: true, virtual: false, encrypted: false, label: 'Id' }
const TITLE_DECL: ScalarDecl = { kind: 'scalar', type: 'Text', required: false, virtual: false, encrypted: false, label: 'Title' }

interface MutableEntity extends EntityModel {
  properties: Map<string, PropertyModel>
}

export function buildModel(plugins: readonly LoadedPlugin[], systemEntities: readonly LoadedPlugin[] = []): Model {
  const entities = new Map<string, MutableEntity>()
  const sets = new Map<string, EntityModel>()
  // The router takes a path's first segment case-insensitively: two names differing only in case are one.
  const setsByLowerCase = new Map<string, { readonly name: string; readonly entity: EntityModel }>()
  const pending: { entity: MutableEntity; name: string; decl: PropertyDecl }[] = []

  for (const { source, decl } of [...systemEntities, ...plugins]) {
    if (decl && typeof decl === 'object') checkOptions(source, 'plugin', decl, PLUGIN_OPTIONS, 'a plugin')
    if (!decl || !Array.isArray(decl.entities)) {
      throw new PluginError(source, 'default export', 'must be plugin({ entities: [...] })')
    }
    for (const entityDecl of decl.entities) {
      const entity = declareEntity(source, entityDecl, systemEntities.some((s) => s.source === source))
      const previous = entities.get(entity.name)
      if (previous) throw new PluginError(source, entity.name, `entity already declared in ${previous.source}`)
      entities.set(entity.name, entity)
      for (const setName of [entity.setName, ...entity.aliases]) {
        const other = sets.get(setName)
        if (other && other !== entity) {
          throw new PluginError(source, entity.name, `entity set name '${setName}' is already used by ${other.name}`)
        }
        const same = setsByLowerCase.get(setName.toLowerCase())
        if (same && same.entity !== entity) {
          const what = setName === entity.setName ? 'entity set name' : 'alias'
          const theirs = same.name === same.entity.setName ? 'the entity set' : 'an alias'
          throw new PluginError(source, entity.name, `the ${what} '${setName}' differs only in case from '${same.name}', ${theirs} of ${same.entity.name}, and paths are matched case-insensitively; choose another`)
        }
        sets.set(setName, entity)
        setsByLowerCase.set(setName.toLowerCase(), { name: setName, entity })
      }
      for (const [name, propertyDecl] of Object.entries(entityDecl.properties)) {
        pending.push({ entity, name, decl: propertyDecl as PropertyDecl })
      }
    }
  }

  // Scalars and references first, so collections can find their inverse reference.
  const order = (d: PropertyDecl) => (d.kind === 'collection' ? 1 : 0)
  for (const { entity, name, decl } of pending.sort((a, b) => order(a.decl) - order(b.decl))) {
    entity.properties.set(name, bindProperty(entities, entity, name, decl))
  }

  for (const entity of entities.values()) {
    addForeignKeys(entity)
    checkEntity(entity, entities)
    checkRuleOrder(entity)
  }

  const responsibilities = new Map<string, ResponsibilityModel>()
  for (const { source, decl } of plugins) {
    for (const [name, value] of Object.entries(decl.responsibilities ?? {})) {
      if (responsibilities.has(name)) {
        throw new PluginError(source, `responsibility ${name}`, `already declared in ${responsibilities.get(name)!.source}`)
      }
      const responsibility: ResponsibilityDecl =
        'permissions' in value && typeof value.permissions === 'object' && !Array.isArray(value.permissions)
          ? (value as ResponsibilityDecl)
          : { permissions: value as ResponsibilityDecl['permissions'] }
      checkResponsibility(source, name, responsibility, entities)
      responsibilities.set(name, { ...responsibility, name, source })
    }
  }

  checkRenames(entities)
  const sources = plugins.map(({ source, decl }) => ({ source, ...(typeof decl.version === 'string' ? { version: decl.version } : {}) }))
  return { entities, sets, responsibilities, plugins: sources }
}

function declareEntity(source: string, decl: EntityDecl, system: boolean): MutableEntity {
  if (typeof decl?.name !== 'string' || !NAME.test(decl.name)) {
    throw new PluginError(source, String(decl?.name), 'an entity name must be an identifier (letters, digits, _)')
  }
  checkOptions(source, decl.name, decl, ENTITY_OPTIONS, 'an entity')
  if (!decl.properties || typeof decl.properties !== 'object') {
    throw new PluginError(source, decl.name, 'properties must be an object')
  }
  const setName = decl.setName ?? pluralize(decl.name)
  const aliases = (decl.aliases ?? [decl.name]).filter((alias) => alias !== setName)
  for (const name of [setName, ...aliases]) {
    if (!NAME.test(name)) throw new PluginError(source, decl.name, `'${name}' is not a valid entity set name`)
  }
  checkReservedSetNames(source, decl, setName, aliases, system)
  const entity: MutableEntity = {
    name: decl.name,
    setName,
    aliases,
    table: decl.name,
    label: decl.label,
    description: decl.description,
    properties: new Map(),
    naturalKey: decl.naturalKey ?? [],
    indexes: decl.indexes ?? [],
    rules: {
      defaults: new Map(Object.entries(decl.defaults ?? {})),
      corrections: new Map(Object.entries(decl.corrections ?? {})),
      computed: new Map(Object.entries(decl.computed ?? {})),
      validations: new Map(Object.entries(decl.validations ?? {})),
    },
    methods: new Map(Object.entries(decl.methods ?? {})),
    source,
    system,
    renamedFrom: decl.renamedFrom,
  }
  entity.properties.set(KEY, { kind: 'scalar', name: KEY, type: 'Guid', decl: GUID_DECL, column: KEY, entity })
  if (!(('Title' as string) in decl.properties)) {
    entity.properties.set('Title', { kind: 'scalar', name: 'Title', type: 'Text', decl: TITLE_DECL, column: 'Title', entity })
  }
  return entity
}

/** A misspelt option would be ignored, and the rules or settings it holds with it. */
function checkOptions(source: string, where: string, decl: object, known: readonly string[], what: string): void {
  for (const option of Object.keys(decl)) {
    if (known.includes(option)) continue
    const hint = closestName(option, known)
    throw new PluginError(source, `${where}.${option}`, `is no option of ${what}${hint ? `; did you mean ${hint}?` : ''}`)
  }
}

/** The set name and aliases are the first segment of the entity's paths (reserved-set-names.ts). */
function checkReservedSetNames(source: string, decl: EntityDecl, setName: string, aliases: readonly string[], system: boolean): void {
  const setReason = reservedSetName(setName, decl.name, system)
  if (setReason) {
    if (decl.setName !== undefined) throw new PluginError(source, `${decl.name}.setName`, `the entity set name '${setName}' is reserved: ${setReason}; choose another setName`)
    throw new PluginError(source, decl.name, `the entity set name '${setName}' (the plural of its name) is reserved: ${setReason}; declare another setName`)
  }
  for (const alias of aliases) {
    const reason = reservedSetName(alias, decl.name, system)
    if (!reason) continue
    if (decl.aliases !== undefined) throw new PluginError(source, `${decl.name}.aliases`, `the alias '${alias}' is reserved: ${reason}; choose other aliases`)
    throw new PluginError(source, decl.name, `the alias '${alias}' (the entity's name) is reserved: ${reason}; rename the entity, or declare its aliases without its name (aliases: [])`)
  }
}

function bindProperty(
  entities: ReadonlyMap<string, EntityModel>,
  entity: MutableEntity,
  name: string,
  decl: PropertyDecl,
): PropertyModel {
  const fail = (problem: string) => new PluginError(entity.source, `${entity.name}.${name}`, problem)
  if (!NAME.test(name) || name.startsWith('_')) throw fail('a property name must be an identifier not starting with _')
  if (name === KEY) throw fail('Guid is the key of every entity and cannot be declared')
  if (!decl || typeof decl !== 'object') throw fail('not a property: use p.text(), p.reference(...), ...')
  switch (decl.kind) {
    case 'scalar': {
      if (!SCALAR_TYPES.has(decl.type)) throw fail(`unknown type '${String(decl.type)}'`)
      if (decl.type === 'Enum' && (!decl.values || decl.values.length === 0)) throw fail('an enumeration needs values')
      if (decl.maxLength !== undefined && !(Number.isInteger(decl.maxLength) && decl.maxLength > 0)) {
        throw fail('maxLength must be a positive integer')
      }
      if (decl.type === 'Decimal' && !(Number.isInteger(decl.precision) && Number.isInteger(decl.scale) && decl.scale! <= decl.precision!)) {
        throw fail('a decimal needs an integer precision and a scale not larger than it')
      }
      if (decl.virtual && decl.encrypted) throw fail('a virtual property is not stored, so it cannot be encrypted')
      if (decl.searchable && (decl.virtual || decl.encrypted || !TEXT_TYPES.has(decl.type))) {
        throw fail('only a stored, unencrypted text property can be searchable')
      }
      if (decl.virtual && !entity.rules.computed.has(name)) throw fail('a virtual property needs a computed rule')
      const property: ScalarProperty = { kind: 'scalar', name, type: decl.type, decl, column: decl.virtual ? undefined : name, entity }
      return property
    }
    case 'reference': {
      const target = entities.get(decl.target)
      if (!target) throw fail(`references unknown entity '${decl.target}'`)
      if (!['cascade', 'restrict', 'setNull'].includes(decl.onDelete)) throw fail(`unknown onDelete '${decl.onDelete}'`)
      if (decl.onDelete === 'setNull' && decl.required) throw fail('a required reference cannot be set to null on delete')
      const property: ReferenceProperty = {
        kind: 'reference', name, decl, target, onDelete: decl.onDelete, required: decl.required, column: `${name}_Guid`, entity,
      }
      return property
    }
    case 'collection': {
      const target = entities.get(decl.target)
      if (!target) throw fail(`collection of unknown entity '${decl.target}'`)
      if (!decl.via) throw fail(`say which reference of ${decl.target} points back: p.many('${decl.target}').via('<reference>')`)
      const inverse = target.properties.get(decl.via)
      if (inverse?.kind !== 'reference' || inverse.target !== entity) {
        throw fail(`${decl.target}.${decl.via} must be a reference to ${entity.name}`)
      }
      const property: CollectionProperty = { kind: 'collection', name, decl, target, inverse, entity }
      return property
    }
    default:
      throw fail(`unknown property kind '${String((decl as { kind: unknown }).kind)}'`)
  }
}

const FOREIGN_KEY_DECL: ScalarDecl = { kind: 'scalar', type: 'Guid', required: false, virtual: false, encrypted: false }

/** Each reference also gets its foreign key as a Guid property, `<Reference>Guid`. */
function addForeignKeys(entity: MutableEntity): void {
  for (const property of [...entity.properties.values()]) {
    if (property.kind !== 'reference') continue
    const name = `${property.name}Guid`
    if (entity.properties.has(name)) {
      throw new PluginError(entity.source, `${entity.name}.${name}`, `is reserved for the foreign key of the reference ${property.name}`)
    }
    const decl: ScalarDecl = { ...FOREIGN_KEY_DECL, required: property.required, label: property.decl.label && `${property.decl.label} (key)` }
    entity.properties.set(name, { kind: 'scalar', name, type: 'Guid', decl, column: property.column, entity, foreignKeyOf: property })
  }
}

function checkEntity(entity: EntityModel, entities: ReadonlyMap<string, EntityModel>): void {
  const fail = (where: string, problem: string) => new PluginError(entity.source, `${entity.name}${where}`, problem)
  const quoted = (names: readonly unknown[]) => names.map((name) => `'${String(name)}'`).join(', ')
  const { naturalKey, indexes } = entity as { naturalKey: unknown; indexes: unknown }
  if (!Array.isArray(naturalKey) || naturalKey.some((key) => typeof key !== 'string')) {
    throw fail('.naturalKey', `must be a list of property names, as [${typeof naturalKey === 'string' ? `'${naturalKey}'` : "'Code'"}]`)
  }
  if (!Array.isArray(indexes) || indexes.some((index) => !Array.isArray(index))) {
    const given = Array.isArray(indexes) && indexes.every((key) => typeof key === 'string') ? quoted(indexes) : "'Status', 'OrderDate desc'"
    throw fail('.indexes', `must be a list of indexes, each a list of keys, as [[${given}]]`)
  }
  for (const key of entity.naturalKey) {
    const property = entity.properties.get(key)
    if (!property || property.kind === 'collection' || (property.kind === 'scalar' && property.decl.virtual)) {
      throw fail('.naturalKey', `'${key}' must be a stored property`)
    }
    // Encryption draws a new IV per write, so equal values are stored unequal.
    if (property.kind === 'scalar' && property.decl.encrypted) {
      throw fail('.naturalKey', `'${key}' is encrypted: its stored values differ each time, so they cannot be unique`)
    }
  }
  for (const index of entity.indexes) {
    for (const text of index) {
      const key = indexKey(text)
      if (!key) throw fail('.indexes', `'${text}' must be a property name, optionally followed by asc or desc`)
      const property = entity.properties.get(key.property)
      if (!property || property.kind === 'collection' || (property.kind === 'scalar' && !property.column)) {
        throw fail('.indexes', `'${key.property}' must be a stored property`)
      }
      if (property.kind === 'scalar' && property.decl.encrypted) throw fail('.indexes', `'${key.property}' is encrypted, so no query filters or sorts on it`)
    }
  }
  for (const [kind, rules] of Object.entries(entity.rules)) {
    for (const [name, rule] of rules as ReadonlyMap<string, unknown>) {
      const property = entity.properties.get(name)
      if (!property) throw fail(`.${kind}.${name}`, 'names no property of the entity')
      const isRule = kind === 'computed' ? typeof (rule as { value?: unknown })?.value === 'function' : typeof rule === 'function'
      if (!isRule) throw fail(`.${kind}.${name}`, kind === 'computed' ? 'must be { from: [...], value: (entity) => ... }' : 'must be a function')
      const sum = kind === 'computed' ? (rule as ComputedRule).sumOf : undefined
      const problem = sum && sumProblem(entity, property, sum)
      if (problem) throw fail(`.${kind}.${name}`, problem)
    }
  }
  for (const [name, method] of entity.methods) {
    if (!NAME.test(name)) throw fail(`.methods.${name}`, 'a method name must be an identifier')
    if (entity.properties.has(name)) throw fail(`.methods.${name}`, 'a method cannot have the name of a property')
    if (typeof method?.run !== 'function' || (method.kind !== 'read' && method.kind !== 'modify')) {
      throw fail(`.methods.${name}`, 'declare it with method.read(...) or method.modify(...)')
    }
    for (const [parameter, decl] of Object.entries(method.params)) {
      // GET parameters share the query string with the system query options.
      if (RESERVED_PARAMETERS.has(parameter.toLowerCase())) {
        throw fail(`.methods.${name}.params.${parameter}`, `'${parameter}' is the name of a system query option; choose another`)
      }
      const problem = declarationProblem(decl, entities)
      if (problem) throw fail(`.methods.${name}.params.${parameter}`, problem === 'not a declaration' ? 'not a parameter: use p.text(), p.integer(), p.reference(...), ...' : problem)
    }
    const problem = method.returns === undefined ? undefined : declarationProblem(method.returns, entities)
    if (problem) throw fail(`.methods.${name}.returns`, problem === 'not a declaration' ? 'not a type: use p.integer(), p.reference(...), p.many(...), ...' : problem)
  }
}

const NUMBERS: ReadonlySet<string> = new Set(['Integer', 'Decimal', 'Double'])

/** What is wrong with a sumOf: it sums a number of a collection's members into a number. */
function sumProblem(entity: EntityModel, property: PropertyModel, sum: NonNullable<ComputedRule['sumOf']>): string | undefined {
  if (property.kind !== 'scalar' || !NUMBERS.has(property.decl.type)) return 'sumOf gives a number: declare the property as p.integer(), p.decimal() or p.double()'
  const collection = entity.properties.get(sum.collection)
  if (collection?.kind !== 'collection') return `sumOf('${sum.collection}', …) needs a collection of ${entity.name} (p.many(...))`
  const member = collection.target.properties.get(sum.property)
  if (member?.kind !== 'scalar' || !NUMBERS.has(member.decl.type)) return `sumOf('${sum.collection}', '${sum.property}') needs a number property of ${collection.target.name}`
  return undefined
}

/** What is wrong with a method's parameter or result type, which no property binding checks. */
function declarationProblem(decl: PropertyDecl | undefined, entities: ReadonlyMap<string, EntityModel>): string | undefined {
  if (!decl || typeof decl !== 'object') return 'not a declaration'
  if (decl.kind === 'scalar') return SCALAR_TYPES.has(decl.type) ? undefined : `unknown type '${String(decl.type)}'`
  if (decl.kind !== 'reference' && decl.kind !== 'collection') return 'not a declaration'
  if (entities.has(decl.target)) return undefined
  const hint = closestName(String(decl.target), [...entities.keys()])
  return `names unknown entity '${decl.target}'${hint ? `; did you mean ${hint}?` : ''}`
}

/**
 * A rename names the old name of something that no longer exists under it: an entity renamed
 * from one that is still declared, or a property from a sibling, would make the migration
 * guess which of the two keeps the data.
 */
function checkRenames(entities: ReadonlyMap<string, EntityModel>): void {
  for (const entity of entities.values()) {
    const fail = (where: string, problem: string) => new PluginError(entity.source, `${entity.name}${where}`, problem)
    if (entity.renamedFrom !== undefined) {
      if (typeof entity.renamedFrom !== 'string' || !NAME.test(entity.renamedFrom)) throw fail('.renamedFrom', 'must be the entity\'s previous name, an identifier')
      if (entities.has(entity.renamedFrom)) throw fail('.renamedFrom', `'${entity.renamedFrom}' is still declared; a renamed entity's old name must be gone`)
    }
    for (const property of entity.properties.values()) {
      if (property.kind === 'collection' || (property.kind === 'scalar' && property.foreignKeyOf)) continue
      const previous = property.decl.renamedFrom
      if (previous === undefined) continue
      const where = `.${property.name}.renamedFrom`
      if (typeof previous !== 'string' || !NAME.test(previous)) throw fail(where, 'must be the property\'s previous name, an identifier')
      if (property.kind === 'scalar' && property.decl.virtual) throw fail(where, 'a virtual property has no column to rename')
      if (entity.properties.has(previous)) throw fail(where, `'${previous}' is still a property of ${entity.name}; a renamed property's old name must be gone`)
    }
  }
}

/** The length of the Responsibility table's Name (system-entities.ts). */
const MAX_RESPONSIBILITY_NAME = 100

function checkResponsibility(
  source: string,
  name: string,
  responsibility: ResponsibilityDecl,
  entities: ReadonlyMap<string, EntityModel>,
): void {
  // The name becomes a row of every tenant's Responsibility table (system-entities.ts), whose
  // rules would otherwise refuse it at each start's sync, and is granted by name on the CLI.
  if (name.trim() === '') throw new PluginError(source, `responsibility ${JSON.stringify(name)}`, 'a responsibility name may not be empty or blank')
  if (name.trim() !== name) throw new PluginError(source, `responsibility ${JSON.stringify(name)}`, 'a responsibility name may not begin or end with a space (`role grant` trims what it is given)')
  if (hasControlCharacter(name)) throw new PluginError(source, `responsibility ${JSON.stringify(name)}`, noControlCharacters('a responsibility name'))
  if (name.length > MAX_RESPONSIBILITY_NAME) throw new PluginError(source, `responsibility ${name.slice(0, 40)}…`, `a responsibility name may have at most ${MAX_RESPONSIBILITY_NAME} characters`)
  for (const [entityName, permissions] of Object.entries(responsibility.permissions ?? {})) {
    const entity = entities.get(entityName)
    const where = `responsibility ${name}.${entityName}`
    if (!entity) throw new PluginError(source, where, `unknown entity '${entityName}'`)
    for (const permission of permissions) {
      if (['read', 'create', 'update', 'delete'].includes(permission)) continue
      const method = /^execute:(.+)$/.exec(permission)?.[1]
      if (!method) throw new PluginError(source, where, `unknown permission '${permission}'`)
      if (!entity.methods.has(method)) throw new PluginError(source, where, `${entityName} has no method '${method}'`)
    }
  }
}
