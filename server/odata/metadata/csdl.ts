// The $metadata document as data: what buildCsdl() decides from the model, and the only input
// of the two writers (write-csdl-xml.ts, write-csdl-json.ts). Every name here is already the
// public one (naming policy applied) and every type is qualified, so the writers only print:
// CSDL XML and CSDL JSON can never disagree on what the service publishes.

export type CsdlVersion = '4.0' | '4.01'

/** `Edm.String`, `entityctl.Order`: the item type; `collection` says Collection(...). */
export interface CsdlTypeRef {
  readonly type: string
  readonly collection: boolean
  /** Written explicitly by both writers: XML and JSON default it differently. */
  readonly nullable?: boolean
  readonly maxLength?: number
  readonly precision?: number
  readonly scale?: number
}

/** An annotation value: the subset of CSDL expressions $metadata uses. */
export type CsdlValue =
  | { readonly kind: 'Bool'; readonly value: boolean }
  | { readonly kind: 'String'; readonly value: string }
  | { readonly kind: 'Int'; readonly value: number }
  | { readonly kind: 'Decimal'; readonly value: number }
  | { readonly kind: 'PropertyPath'; readonly value: string }
  | { readonly kind: 'NavigationPropertyPath'; readonly value: string }
  | { readonly kind: 'Collection'; readonly items: readonly CsdlValue[] }
  | { readonly kind: 'Record'; readonly properties: Readonly<Record<string, CsdlValue>> }

export interface CsdlAnnotation {
  /** Alias-qualified term: `Core.Description`, `Common.Label`. */
  readonly term: string
  readonly value: CsdlValue
}

export interface Annotated {
  readonly annotations: readonly CsdlAnnotation[]
}

export interface CsdlProperty extends Annotated, CsdlTypeRef {
  readonly name: string
  readonly nullable: boolean
}

export type CsdlOnDelete = 'Cascade' | 'None' | 'SetNull'

export interface CsdlNavigationProperty extends Annotated {
  readonly name: string
  /** Qualified target entity type. */
  readonly type: string
  readonly collection: boolean
  /** Only for single-valued navigation; CSDL forbids it on collections. */
  readonly nullable?: boolean
  readonly partner?: string
  /** Dependent property (this type) → principal property (target type). */
  readonly referentialConstraints: readonly { readonly property: string; readonly referencedProperty: string }[]
  readonly onDelete?: CsdlOnDelete
}

export interface CsdlEntityType extends Annotated {
  readonly kind: 'EntityType'
  readonly name: string
  readonly key: readonly string[]
  readonly properties: readonly CsdlProperty[]
  readonly navigationProperties: readonly CsdlNavigationProperty[]
}

export interface CsdlEnumMember extends Annotated {
  readonly name: string
  readonly value: number
}

export interface CsdlEnumType extends Annotated {
  readonly kind: 'EnumType'
  readonly name: string
  readonly members: readonly CsdlEnumMember[]
}

export interface CsdlParameter extends Annotated, CsdlTypeRef {
  readonly name: string
  readonly nullable: boolean
}

export interface CsdlOperation extends Annotated {
  readonly kind: 'Action' | 'Function'
  readonly name: string
  readonly isBound: boolean
  readonly entitySetPath?: string
  /** The binding parameter first when isBound. */
  readonly parameters: readonly CsdlParameter[]
  readonly returnType?: CsdlTypeRef & { readonly nullable: boolean }
}

export interface CsdlEntitySet extends Annotated {
  readonly name: string
  readonly entityType: string
  readonly navigationPropertyBindings: readonly { readonly path: string; readonly target: string }[]
}

export interface CsdlEntityContainer extends Annotated {
  readonly name: string
  readonly entitySets: readonly CsdlEntitySet[]
}

export interface CsdlReference {
  readonly uri: string
  readonly namespace: string
  readonly alias: string
}

export interface CsdlSchema {
  readonly namespace: string
  readonly types: readonly (CsdlEnumType | CsdlEntityType)[]
  /** In declaration order; overloads share a name (JSON groups them, XML lists them). */
  readonly operations: readonly CsdlOperation[]
  readonly container: CsdlEntityContainer
}

export interface Csdl {
  readonly version: CsdlVersion
  /** Only the vocabularies the document's annotations use. */
  readonly references: readonly CsdlReference[]
  readonly schema: CsdlSchema
}
