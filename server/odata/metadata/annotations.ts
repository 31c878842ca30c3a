// Vocabulary annotations of $metadata: the vocabularies we reference and small factories for
// the terms we use, so buildCsdl() reads as "this property is computed", not as records of
// records. Terms are checked against shared/oasis/odata-vocabularies (and SAP's Common for
// Label, the label term generic clients and SAP tools read; OASIS has none).

import type { PropertyDecl } from '../../model/declarations.ts'
import type { CsdlAnnotation, CsdlReference, CsdlValue } from './csdl.ts'

const OASIS = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies'

/** Alias → vocabulary; a document references only the ones its annotations use. */
export const VOCABULARIES: Readonly<Record<string, CsdlReference>> = {
  Core: { alias: 'Core', namespace: 'Org.OData.Core.V1', uri: `${OASIS}/Org.OData.Core.V1.xml` },
  Capabilities: { alias: 'Capabilities', namespace: 'Org.OData.Capabilities.V1', uri: `${OASIS}/Org.OData.Capabilities.V1.xml` },
  Validation: { alias: 'Validation', namespace: 'Org.OData.Validation.V1', uri: `${OASIS}/Org.OData.Validation.V1.xml` },
  Common: {
    alias: 'Common',
    namespace: 'com.sap.vocabularies.Common.v1',
    uri: 'https://sap.github.io/odata-vocabularies/vocabularies/Common.xml',
  },
}

export const value = {
  bool: (v: boolean): CsdlValue => ({ kind: 'Bool', value: v }),
  string: (v: string): CsdlValue => ({ kind: 'String', value: v }),
  int: (v: number): CsdlValue => ({ kind: 'Int', value: v }),
  decimal: (v: number): CsdlValue => ({ kind: 'Decimal', value: v }),
  propertyPaths: (paths: readonly string[]): CsdlValue => ({
    kind: 'Collection',
    items: paths.map((path) => ({ kind: 'PropertyPath', value: path })),
  }),
  record: (properties: Record<string, CsdlValue>): CsdlValue => ({ kind: 'Record', properties }),
  collection: (items: readonly CsdlValue[]): CsdlValue => ({ kind: 'Collection', items }),
}

const number = (v: number, integer: boolean) => (integer && Number.isInteger(v) ? value.int(v) : value.decimal(v))
const annotation = (term: string, v: CsdlValue): CsdlAnnotation => ({ term, value: v })
const tag = (term: string): CsdlAnnotation => annotation(term, value.bool(true))

/** Label and description of a model element, when declared. */
export function documentation(doc: { readonly label?: string; readonly description?: string }): CsdlAnnotation[] {
  const annotations: CsdlAnnotation[] = []
  if (doc.label) annotations.push(annotation('Common.Label', value.string(doc.label)))
  if (doc.description) annotations.push(annotation('Core.Description', value.string(doc.description)))
  return annotations
}

export const annotate = {
  description: (text: string) => annotation('Core.Description', value.string(text)),
  /** The service sets the value (rules, virtual); a client's value is ignored. */
  computed: () => tag('Core.Computed'),
  /** The client may send a value; without one the service makes it (a default rule, the key). */
  computedDefaultValue: () => tag('Core.ComputedDefaultValue'),
  minimum: (v: number, integer: boolean) => annotation('Validation.Minimum', number(v, integer)),
  maximum: (v: number, integer: boolean) => annotation('Validation.Maximum', number(v, integer)),
  /** For value lists that cannot be an enumeration type (members must be identifiers). */
  allowedValues: (values: readonly string[]) =>
    annotation('Validation.AllowedValues', value.collection(values.map((v) => value.record({ Value: value.string(v) })))),
  /** A parameter the caller may omit; CSDL wants these after the others. */
  optionalParameter: (defaultValue: string | undefined) =>
    annotation('Core.OptionalParameter', value.record(defaultValue === undefined ? {} : { DefaultValue: value.string(defaultValue) })),
  /** Every set has a row version: writes need If-Match (decisions.md, Writes). Empty: how the ETag is made is ours. */
  optimisticConcurrency: () => annotation('Core.OptimisticConcurrency', value.collection([])),
  nonFilterable: (paths: readonly string[]) =>
    annotation('Capabilities.FilterRestrictions', value.record({ NonFilterableProperties: value.propertyPaths(paths) })),
  nonSortable: (paths: readonly string[]) =>
    annotation('Capabilities.SortRestrictions', value.record({ NonSortableProperties: value.propertyPaths(paths) })),
  /**
   * Whether $search works on the set (it needs searchable properties): UI5 and Fiori clients
   * offer a search field only where it is true. Every expression is supported (`AND`, `OR`,
   * `NOT`, phrases, groups), which is the term's default for UnsupportedExpressions.
   */
  searchable: (searchable: boolean) => annotation('Capabilities.SearchRestrictions', value.record({ Searchable: value.bool(searchable) })),
  maxExpandLevels: (levels: number) => annotation('Capabilities.ExpandRestrictions', value.record({ MaxLevels: value.int(levels) })),
  keyAsSegmentSupported: () => tag('Capabilities.KeyAsSegmentSupported'),
  /** A set clients only read: no create, update or delete (UI5 hides those actions). */
  readOnly: () => [
    annotation('Capabilities.InsertRestrictions', value.record({ Insertable: value.bool(false) })),
    annotation('Capabilities.UpdateRestrictions', value.record({ Updatable: value.bool(false) })),
    annotation('Capabilities.DeleteRestrictions', value.record({ Deletable: value.bool(false) })),
  ],
  odataVersions: (versions: string) => annotation('Core.ODataVersions', value.string(versions)),
}

/** What a value must be, beyond its type: min/max, and the allowed values of a list that is no enumeration type. */
export function constraints(decl: PropertyDecl, enumType: string | undefined): CsdlAnnotation[] {
  if (decl.kind !== 'scalar') return []
  const annotations: CsdlAnnotation[] = []
  const integer = decl.type === 'Integer'
  if (decl.min !== undefined && Number.isFinite(decl.min)) annotations.push(annotate.minimum(decl.min, integer))
  if (decl.max !== undefined && Number.isFinite(decl.max)) annotations.push(annotate.maximum(decl.max, integer))
  if (decl.type === 'Enum' && enumType === undefined && decl.values) annotations.push(annotate.allowedValues(decl.values))
  return annotations
}
