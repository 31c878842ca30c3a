// One entity of the model → its EntityType: the key Guid, typed properties with facets (the
// foreign key the model adds for each reference among them), and navigation properties with
// partners, referential constraints and delete actions.
//
//   Order.Customer: p.reference('Customer').required()  →
//     <Property Name="CustomerGuid" Type="Edm.Guid" Nullable="false"/>       (model: foreignKeyOf)
//     <NavigationProperty Name="Customer" Type="entityctl.Customer" Nullable="false" Partner="Orders">
//       <ReferentialConstraint Property="CustomerGuid" ReferencedProperty="Guid"/>

import type { OnDelete } from '../../model/declarations.ts'
import type { CollectionProperty, EntityModel, ReferenceProperty, ScalarProperty } from '../../model/model.ts'
import { KEY } from '../../model/model.ts'
import { PluginError } from '../../model/plugin-error.ts'
import { annotate, constraints, documentation } from './annotations.ts'
import { qualified, type BuildContext } from './build-context.ts'
import type { CsdlAnnotation, CsdlEntityType, CsdlNavigationProperty, CsdlOnDelete, CsdlProperty } from './csdl.ts'
import { scalarTypeRef } from './edm-types.ts'

// OnDelete sits on the principal's collection (CSDL 4.01 §8.6: what happens to the related
// entities when this one is deleted); restrict refuses the delete, which is CSDL's None.
const ON_DELETE: Readonly<Record<OnDelete, CsdlOnDelete>> = { cascade: 'Cascade', restrict: 'None', setNull: 'SetNull' }

export function buildEntityType(entity: EntityModel, context: BuildContext): CsdlEntityType {
  const properties: CsdlProperty[] = []
  const navigationProperties: CsdlNavigationProperty[] = []
  for (const property of entity.properties.values()) {
    switch (property.kind) {
      case 'scalar':
        properties.push(scalarProperty(property, context))
        break
      case 'reference':
        navigationProperties.push(referenceNavigation(property, context))
        break
      case 'collection':
        navigationProperties.push(collectionNavigation(property, context))
        break
    }
  }
  checkUnique(entity, [...properties, ...navigationProperties].map((p) => p.name))
  return {
    kind: 'EntityType',
    name: entity.name,
    key: [context.naming.toPublic(KEY)],
    properties,
    navigationProperties,
    annotations: documentation(entity),
  }
}

/** Rule-made values: computed ones the client cannot set, defaulted ones it may omit. */
function ruleAnnotations(entity: EntityModel, name: string): CsdlAnnotation[] {
  if (entity.rules.computed.has(name)) return [annotate.computed()]
  if (entity.rules.defaults.has(name)) return [annotate.computedDefaultValue()]
  return []
}

function scalarProperty(property: ScalarProperty, context: BuildContext): CsdlProperty {
  const { decl, entity, name } = property
  const enumType = decl.type === 'Enum' ? context.enums.declare(`${entity.name}${name}`, decl.values ?? []) : undefined
  const made =
    decl.virtual ? [annotate.computed()]
    : name === KEY ? [annotate.computedDefaultValue()] // a create without Guid gets a UUID v7
    : ruleAnnotations(entity, property.foreignKeyOf?.name ?? name) // a foreign key is made as its reference is
  return {
    name: context.naming.toPublic(name),
    ...scalarTypeRef(decl, enumType),
    nullable: !decl.required,
    annotations: [...documentation(decl), ...made, ...constraints(decl, enumType)],
  }
}

/** The structural property holding the reference's key: Order.CustomerGuid for Order.Customer. */
function foreignKeyOf(reference: ReferenceProperty): ScalarProperty {
  for (const property of reference.entity.properties.values()) {
    if (property.kind === 'scalar' && property.foreignKeyOf === reference) return property
  }
  throw new Error(`${reference.entity.name}.${reference.name} has no foreign key property in the model`)
}

/** The collection on the target that pairs with this reference: the first one declared `via` it. */
function partnerOf(reference: ReferenceProperty): CollectionProperty | undefined {
  for (const property of reference.target.properties.values()) {
    if (property.kind === 'collection' && property.inverse === reference) return property
  }
  return undefined
}

function referenceNavigation(reference: ReferenceProperty, context: BuildContext): CsdlNavigationProperty {
  const { toPublic } = context.naming
  const partner = partnerOf(reference)
  return {
    name: toPublic(reference.name),
    type: qualified(context, reference.target.name),
    collection: false,
    nullable: !reference.required,
    partner: partner && toPublic(partner.name),
    referentialConstraints: [{ property: toPublic(foreignKeyOf(reference).name), referencedProperty: toPublic(KEY) }],
    annotations: documentation(reference.decl),
  }
}

function collectionNavigation(collection: CollectionProperty, context: BuildContext): CsdlNavigationProperty {
  // A second collection via the same reference gets no Partner: partners must point at each other.
  const paired = partnerOf(collection.inverse) === collection
  return {
    name: context.naming.toPublic(collection.name),
    type: qualified(context, collection.target.name),
    collection: true,
    partner: paired ? context.naming.toPublic(collection.inverse.name) : undefined,
    referentialConstraints: [],
    onDelete: ON_DELETE[collection.inverse.onDelete],
    annotations: documentation(collection.decl),
  }
}

/** Two declared names may meet after casing: URL, Url → url. */
function checkUnique(entity: EntityModel, names: readonly string[]): void {
  const seen = new Set<string>()
  for (const name of names) {
    if (seen.has(name)) {
      const problem = 'two properties have this public name in $metadata'
      throw new PluginError(entity.source, `${entity.name}.${name}`, problem)
    }
    seen.add(name)
  }
}
