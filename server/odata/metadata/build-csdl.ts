// Model → the $metadata document as data (csdl.ts), from which write-csdl-xml.ts and
// write-csdl-json.ts print GET /api/$metadata. A pure function of the model, the naming
// policy and the options, so the result can be built once per casing and cached.
//
// Public names follow the naming policy (EnableLowerCamelCase) for everything a request or a
// body names: properties, navigation properties, methods, parameters. Entity type, enumeration
// type and entity set names stay as declared: sets are path segments the router matches as
// declared (decisions.md: canonical set names; aliases are not published). A reference's
// foreign key is the model's own `<Reference>Guid` property (build-model.ts), which the
// navigation property's ReferentialConstraint points at.

import type { MethodKind } from '../../model/declarations.ts'
import { searchableProperties, writableOverApi, type EntityModel, type Model } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { PluginError } from '../../model/plugin-error.ts'
import { annotate, VOCABULARIES } from './annotations.ts'
import { qualified, type BuildContext } from './build-context.ts'
import { buildEntityType } from './build-entity-type.ts'
import { buildOperation } from './build-operations.ts'
import type { Annotated, Csdl, CsdlAnnotation, CsdlEntitySet, CsdlOperation, CsdlReference, CsdlSchema, CsdlVersion } from './csdl.ts'
import { EnumTypes, SchemaNames } from './edm-types.ts'

export interface CsdlOptions {
  /** Schema namespace, the prefix of every type name. Default `entityctl`. */
  readonly namespace?: string
  /** edmx:Edmx Version / $Version. Default 4.01; the document uses nothing 4.0 lacks. */
  readonly version?: CsdlVersion
  /** ApiOptions MaxExpansionDepth, published as Capabilities.ExpandRestrictions/MaxLevels. */
  readonly maxExpansionDepth?: number
}

export const DEFAULT_NAMESPACE = 'entityctl'

export function buildCsdl(model: Model, naming: NamingPolicy, options: CsdlOptions = {}): Csdl {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  const names = new SchemaNames()
  for (const entity of model.entities.values()) names.add(entity.name)
  const context: BuildContext = { namespace, naming, enums: new EnumTypes(namespace, names) }

  const operations = buildOperations(model, context, names)
  const entityTypes = [...model.entities.values()].map((entity) => buildEntityType(entity, context))
  const entitySets = [...model.entities.values()].map((entity) => buildEntitySet(entity, context, options))
  const container = {
    name: names.free('Container'),
    entitySets,
    annotations: [annotate.odataVersions('4.0 4.01'), annotate.keyAsSegmentSupported()],
  }
  const schema: CsdlSchema = { namespace, types: [...context.enums.types, ...entityTypes], operations, container }
  return { version: options.version ?? '4.01', references: referencesOf(schema), schema }
}

const built = new WeakMap<Model, Map<boolean, Csdl>>()

/** The document of the model in this casing, built once: what answers read the declared types from. */
function builtCsdl(model: Model, naming: NamingPolicy): Csdl {
  let byCasing = built.get(model)
  if (!byCasing) built.set(model, (byCasing = new Map()))
  let csdl = byCasing.get(naming.lowerCamelCase)
  if (!csdl) byCasing.set(naming.lowerCamelCase, (csdl = buildCsdl(model, naming)))
  return csdl
}

/**
 * The type $metadata declares a method returns, as a value's context URL names it
 * (OData JSON 10): an enumeration result is `entityctl.OrderStatusResult`, a name the schema
 * gives (EnumTypes), so it is read from the document.
 */
export function declaredReturnType(model: Model, naming: NamingPolicy, entity: EntityModel, method: string): string | undefined {
  const csdl = builtCsdl(model, naming)
  const name = naming.toPublic(method)
  const binding = `${csdl.schema.namespace}.${entity.name}`
  return csdl.schema.operations.find((o) => o.name === name && o.parameters[0]?.type === binding)?.returnType?.type
}

/**
 * The type $metadata declares for a structural property (`Edm.Decimal`,
 * `entityctl.OrderStatus`), as odata.metadata=full names it in an answer (`Status@odata.type`).
 */
export function declaredPropertyType(model: Model, naming: NamingPolicy, entity: EntityModel, property: string): string | undefined {
  const csdl = builtCsdl(model, naming)
  const type = csdl.schema.types.find((t) => t.kind === 'EntityType' && t.name === entity.name)
  return type?.kind === 'EntityType' ? type.properties.find((p) => p.name === naming.toPublic(property))?.type : undefined
}

function buildOperations(model: Model, context: BuildContext, names: SchemaNames): CsdlOperation[] {
  // Operations share the schema with the types; overloads (one per binding type) share a
  // name, but an action and a function may not. Names are taken before any enumeration
  // type is named, so a generated name never takes a method's.
  const kindOf = new Map<string, { kind: MethodKind; entity: EntityModel }>()
  for (const entity of model.entities.values()) {
    // Close and close meet under EnableLowerCamelCase: two overloads with one binding type.
    const ownNames = new Set<string>()
    for (const [name, method] of entity.methods) {
      const publicName = context.naming.toPublic(name)
      const where = `${entity.name}.methods.${name}`
      if (ownNames.has(publicName)) throw new PluginError(entity.source, where, `two methods of ${entity.name} have the public name '${publicName}' in $metadata`)
      ownNames.add(publicName)
      const other = kindOf.get(publicName)
      if (!other && names.has(publicName)) {
        throw new PluginError(entity.source, where, `'${publicName}' is also the name of an entity type; rename the method`)
      }
      if (other && other.kind !== method.kind) {
        const problem = `'${publicName}' is also a ${other.kind} method of ${other.entity.name}; OData cannot overload a function with an action`
        throw new PluginError(entity.source, where, problem)
      }
      kindOf.set(publicName, { kind: method.kind, entity })
      names.add(publicName)
    }
  }
  return [...model.entities.values()].flatMap((entity) =>
    [...entity.methods].map(([name, method]) => buildOperation(entity, name, method, context)),
  )
}

function buildEntitySet(entity: EntityModel, context: BuildContext, options: CsdlOptions): CsdlEntitySet {
  const { toPublic } = context.naming
  const navigationPropertyBindings = []
  const notQueryable: string[] = []
  for (const property of entity.properties.values()) {
    if (property.kind !== 'scalar') {
      navigationPropertyBindings.push({ path: toPublic(property.name), target: property.target.setName })
    } else if (property.decl.virtual || property.decl.encrypted) {
      // Virtual values do not exist in the database, encrypted ones are unreadable there.
      notQueryable.push(toPublic(property.name))
    }
  }
  const annotations: CsdlAnnotation[] = [annotate.optimisticConcurrency()]
  if (notQueryable.length > 0) annotations.push(annotate.nonFilterable(notQueryable), annotate.nonSortable(notQueryable))
  annotations.push(annotate.searchable(searchableProperties(entity).length > 0))
  if (!writableOverApi(entity)) annotations.push(...annotate.readOnly())
  if (options.maxExpansionDepth !== undefined) annotations.push(annotate.maxExpandLevels(options.maxExpansionDepth))
  return { name: entity.setName, entityType: qualified(context, entity.name), navigationPropertyBindings, annotations }
}

/** The vocabularies the annotations use, in the order of VOCABULARIES. */
function referencesOf(schema: CsdlSchema): CsdlReference[] {
  const used = new Set<string>()
  const visit = (element: Annotated) => element.annotations.forEach((a) => used.add(a.term.slice(0, a.term.indexOf('.'))))
  for (const type of schema.types) {
    visit(type)
    const children: readonly Annotated[] = type.kind === 'EnumType' ? type.members : [...type.properties, ...type.navigationProperties]
    children.forEach(visit)
  }
  for (const operation of schema.operations) {
    visit(operation)
    operation.parameters.forEach(visit)
  }
  visit(schema.container)
  schema.container.entitySets.forEach(visit)
  return Object.values(VOCABULARIES).filter((vocabulary) => used.has(vocabulary.alias))
}
