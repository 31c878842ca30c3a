import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import { escapeAttribute, writeCsdlXml } from '../../../server/odata/metadata/write-csdl-xml.ts'
import { demoModel } from './demo-model.ts'
import { entity, method, p } from '../../../server/plugin.ts'
import { fixtureModel, modelOf } from './fixture-model.ts'

// Expected XML is written as the writer indents it: two spaces per level, one element a line.
const block = (...lines: string[]) => lines.join('\n')

let model: Model
let xml: string
let camelXml: string

beforeAll(async () => {
  model = await demoModel()
  xml = writeCsdlXml(buildCsdl(model, namingPolicy(false)))
  camelXml = writeCsdlXml(buildCsdl(model, namingPolicy(true)))
})

describe('writeCsdlXml on the demo model', () => {
  it('opens with an edmx 4.01 envelope referencing only the vocabularies it uses', () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.01">')).toBe(true)
    expect(xml).toContain(block(
      '  <edmx:Reference Uri="https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.xml">',
      '    <edmx:Include Namespace="Org.OData.Core.V1" Alias="Core"/>',
      '  </edmx:Reference>',
    ))
    expect(xml).toContain('<edmx:Include Namespace="com.sap.vocabularies.Common.v1" Alias="Common"/>')
    expect(xml).toContain('<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="entityctl">')
  })

  it('writes Version="4.0" when asked, for 4.0 clients', () => {
    const old = writeCsdlXml(buildCsdl(model, namingPolicy(false), { version: '4.0' }))
    expect(old).toContain('<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">')
  })

  it('types the key and text properties with MaxLength, labels and descriptions', () => {
    expect(xml).toContain(block(
      '      <EntityType Name="Customer">',
      '        <Key>',
      '          <PropertyRef Name="Guid"/>',
      '        </Key>',
      '        <Property Name="Guid" Type="Edm.Guid" Nullable="false">',
      '          <Annotation Term="Common.Label" String="Id"/>',
      '          <Annotation Term="Core.ComputedDefaultValue" Bool="true"/>',
      '        </Property>',
      '        <Property Name="Name" Type="Edm.String" MaxLength="100" Nullable="false">',
      '          <Annotation Term="Common.Label" String="Name"/>',
      '        </Property>',
      '        <Property Name="Email" Type="Edm.String" MaxLength="254">',
      '          <Annotation Term="Common.Label" String="E-mail"/>',
      '          <Annotation Term="Core.Description" String="Where invoices are sent"/>',
      '        </Property>',
    ))
  })

  it('gives decimals Precision and Scale and integers Edm.Int32 with their bounds', () => {
    expect(xml).toContain('<Property Name="CreditLimit" Type="Edm.Decimal" Precision="12" Scale="2">')
    expect(xml).toContain(block(
      '        <Property Name="Quantity" Type="Edm.Int32" Nullable="false">',
      '          <Annotation Term="Validation.Minimum" Int="1"/>',
      '          <Annotation Term="Validation.Maximum" Int="10"/>',
      '        </Property>',
    ))
    expect(xml).toContain('<Property Name="OrderDate" Type="Edm.Date">')
  })

  it('marks rule-computed properties Core.Computed and defaulted ones Core.ComputedDefaultValue', () => {
    expect(xml).toContain(block(
      '        <Property Name="Total" Type="Edm.Decimal" Precision="14" Scale="2">',
      '          <Annotation Term="Common.Label" String="Total"/>',
      '          <Annotation Term="Core.Description" String="Sum of the line totals, kept by the rules"/>',
      '          <Annotation Term="Core.Computed" Bool="true"/>',
      '        </Property>',
    ))
    expect(xml).toContain(block(
      '        <Property Name="Status" Type="entityctl.OrderStatus">',
      '          <Annotation Term="Core.ComputedDefaultValue" Bool="true"/>',
      '        </Property>',
    ))
  })

  it('publishes a oneOf list as an enumeration type named <Entity><Property>', () => {
    expect(xml).toContain(block(
      '      <EnumType Name="OrderStatus">',
      '        <Member Name="Open" Value="0"/>',
      '        <Member Name="Closed" Value="1"/>',
      '      </EnumType>',
    ))
  })

  it('exposes each reference as a foreign key property, constrained by its navigation property', () => {
    expect(xml).toContain(block(
      '        <Property Name="CustomerGuid" Type="Edm.Guid" Nullable="false"/>',
    ))
    expect(xml).toContain(block(
      '        <NavigationProperty Name="Customer" Type="entityctl.Customer" Nullable="false" Partner="Orders">',
      '          <ReferentialConstraint Property="CustomerGuid" ReferencedProperty="Guid"/>',
      '        </NavigationProperty>',
    ))
    // No collection on Product points back: a navigation without partner.
    expect(xml).toContain(block(
      '        <NavigationProperty Name="Product" Type="entityctl.Product" Nullable="false">',
      '          <ReferentialConstraint Property="ProductGuid" ReferencedProperty="Guid"/>',
      '        </NavigationProperty>',
    ))
  })

  it('puts the delete action on the principal collection: cascade → Cascade, restrict → None', () => {
    expect(xml).toContain(block(
      '        <NavigationProperty Name="Lines" Type="Collection(entityctl.OrderLine)" Partner="Order">',
      '          <OnDelete Action="Cascade"/>',
      '        </NavigationProperty>',
    ))
    expect(xml).toContain(block(
      '        <NavigationProperty Name="Orders" Type="Collection(entityctl.Order)" Partner="Customer">',
      '          <OnDelete Action="None"/>',
      '        </NavigationProperty>',
    ))
  })

  it('binds instance methods to the entity type and static ones to its collection', () => {
    expect(xml).toContain(block(
      '      <Function Name="Revenue" IsBound="true">',
      '        <Annotation Term="Core.Description" String="Sum of the totals of all orders of this customer"/>',
      '        <Parameter Name="bindingParameter" Type="entityctl.Customer" Nullable="false"/>',
      '        <ReturnType Type="Edm.Decimal" Precision="14" Scale="2"/>',
      '      </Function>',
    ))
    expect(xml).toContain(block(
      '      <Action Name="Reprice" IsBound="true">',
      '        <Annotation Term="Core.Description" String="Changes the price of every product of a category by a percentage"/>',
      '        <Parameter Name="bindingParameter" Type="Collection(entityctl.Product)" Nullable="false"/>',
      '        <Parameter Name="category" Type="Edm.String" Nullable="false"/>',
      '        <Parameter Name="percent" Type="Edm.Decimal" Precision="6" Scale="2" Nullable="false"/>',
      '        <ReturnType Type="Edm.Int32"/>',
      '      </Action>',
    ))
    expect(xml).toContain(block(
      '      <Action Name="Close" IsBound="true">',
      '        <Annotation Term="Core.Description" String="Closes the order"/>',
      '        <Parameter Name="bindingParameter" Type="entityctl.Order" Nullable="false"/>',
      '      </Action>',
    ))
    expect(xml).toContain(block(
      '      <Function Name="OpenSince" IsBound="true" EntitySetPath="bindingParameter">',
      '        <Annotation Term="Core.Description" String="Open orders placed before a date"/>',
      '        <Parameter Name="bindingParameter" Type="Collection(entityctl.Order)" Nullable="false"/>',
      '        <Parameter Name="before" Type="Edm.Date" Nullable="false"/>',
      '        <ReturnType Type="Collection(entityctl.Order)" Nullable="false"/>',
      '      </Function>',
    ))
    expect(xml).not.toContain('FunctionImport')
  })

  it('publishes canonical set names only, with navigation bindings, optimistic concurrency and whether $search works', () => {
    // Orders have no searchable property: UI5 and Fiori clients then offer no search field.
    expect(xml).toContain(block(
      '        <EntitySet Name="Orders" EntityType="entityctl.Order">',
      '          <NavigationPropertyBinding Path="Customer" Target="Customers"/>',
      '          <NavigationPropertyBinding Path="Lines" Target="OrderLines"/>',
      '          <Annotation Term="Core.OptimisticConcurrency">',
      '            <Collection/>',
      '          </Annotation>',
      '          <Annotation Term="Capabilities.SearchRestrictions">',
      '            <Record>',
      '              <PropertyValue Property="Searchable" Bool="false"/>',
      '            </Record>',
      '          </Annotation>',
      '        </EntitySet>',
    ))
    expect(xml).toContain(block(
      '        <EntitySet Name="Customers" EntityType="entityctl.Customer">',
      '          <NavigationPropertyBinding Path="Orders" Target="Orders"/>',
      '          <Annotation Term="Core.OptimisticConcurrency">',
      '            <Collection/>',
      '          </Annotation>',
      '          <Annotation Term="Capabilities.SearchRestrictions">',
      '            <Record>',
      '              <PropertyValue Property="Searchable" Bool="true"/>',
      '            </Record>',
      '          </Annotation>',
    ))
    expect(xml).toContain('<EntitySet Name="Roles" EntityType="entityctl.Role">')
    expect(xml).not.toMatch(/EntitySet Name="(Order|Role|roles)"/)
  })

  it('annotates the container with the versions and key-as-segment URLs', () => {
    expect(xml).toContain(block(
      '      <EntityContainer Name="Container">',
      '        <Annotation Term="Core.ODataVersions" String="4.0 4.01"/>',
      '        <Annotation Term="Capabilities.KeyAsSegmentSupported" Bool="true"/>',
    ))
  })

  it('publishes MaxExpansionDepth as ExpandRestrictions when given', () => {
    const limited = writeCsdlXml(buildCsdl(model, namingPolicy(false), { maxExpansionDepth: 5 }))
    expect(limited).toContain(block(
      '          <Annotation Term="Capabilities.ExpandRestrictions">',
      '            <Record>',
      '              <PropertyValue Property="MaxLevels" Int="5"/>',
      '            </Record>',
      '          </Annotation>',
    ))
    expect(xml).not.toContain('ExpandRestrictions')
  })
})

describe('writeCsdlXml with EnableLowerCamelCase', () => {
  it('lower-cases properties, navigation, foreign keys, methods and parameters', () => {
    expect(camelXml).toContain('<PropertyRef Name="guid"/>')
    expect(camelXml).toContain('<Property Name="creditLimit" Type="Edm.Decimal" Precision="12" Scale="2">')
    expect(camelXml).toContain('<Property Name="customerGuid" Type="Edm.Guid" Nullable="false"/>')
    expect(camelXml).toContain(block(
      '        <NavigationProperty Name="customer" Type="entityctl.Customer" Nullable="false" Partner="orders">',
      '          <ReferentialConstraint Property="customerGuid" ReferencedProperty="guid"/>',
      '        </NavigationProperty>',
    ))
    expect(camelXml).toContain('<Function Name="openSince" IsBound="true" EntitySetPath="bindingParameter">')
    expect(camelXml).toContain('<NavigationPropertyBinding Path="lines" Target="OrderLines"/>')
  })

  it('keeps type, enumeration and set names as declared', () => {
    expect(camelXml).toContain('<EntityType Name="OrderLine">')
    expect(camelXml).toContain('<EnumType Name="OrderStatus">')
    expect(camelXml).toContain('<EntitySet Name="OrderLines" EntityType="entityctl.OrderLine">')
    expect(camelXml).toContain('<Property Name="status" Type="entityctl.OrderStatus">')
  })
})

describe('writeCsdlXml escaping', () => {
  it('escapes markup and keeps line breaks and tabs of plugin text', () => {
    expect(escapeAttribute('a < b & "c"\n\td')).toBe('a &lt; b &amp; &quot;c&quot;&#10;&#9;d')
  })

  it('replaces characters XML cannot carry instead of writing an unparsable document', () => {
    expect(escapeAttribute('bell\u0001 lone\uD800 pair\uD83D\uDE00')).toBe('bell\uFFFD lone\uFFFD pair\uD83D\uDE00')
  })

  it('escapes labels and descriptions in the document', () => {
    const fixture = writeCsdlXml(buildCsdl(fixtureModel(), namingPolicy(false)))
    expect(fixture).toContain(
      '<Annotation Term="Core.Description" String="Line 1&#10;Line 2 &lt;b&gt;&amp;&lt;/b&gt; &quot;quoted&quot; \'single\'&#9;tab\uFFFDbell"/>',
    )
    expect(fixture).toContain('<Annotation Term="Core.Description" String="A &lt;customer&gt; request &amp; its &quot;state&quot;"/>')
  })
})

describe('writeCsdlXml numbers and defaults', () => {
  it('writes bounds as xs:integer and xs:decimal do, without an exponent', () => {
    const Box = entity('Box', { properties: { Count: p.integer().min(-5).max(1e21), Score: p.double().min(-1.5).max(1e-7) } })
    const document = writeCsdlXml(buildCsdl(modelOf({ entities: [Box] }), namingPolicy(false)))
    expect(document).toContain('<Annotation Term="Validation.Maximum" Int="1000000000000000000000"/>')
    expect(document).toContain('<Annotation Term="Validation.Maximum" Decimal="0.0000001"/>')
    expect(document).toContain('<Annotation Term="Validation.Minimum" Decimal="-1.5"/>')
    expect(document).not.toMatch(/\d[eE][+-]?\d/)
  })

  it("writes a Date default of a date or date-time parameter as its type's literal", () => {
    const params = {
      day: { ...p.date().decl, default: new Date('2024-01-31T00:00:00Z') },
      when: { ...p.dateTime().decl, default: new Date('2024-01-31T10:00:00Z') },
    }
    const Box = entity('Box', { properties: {}, methods: { Go: method.modify('x', { params }, () => undefined) } })
    const document = writeCsdlXml(buildCsdl(modelOf({ entities: [Box] }), namingPolicy(false)))
    expect(document).toContain('<PropertyValue Property="DefaultValue" String="2024-01-31"/>')
    expect(document).toContain('<PropertyValue Property="DefaultValue" String="2024-01-31T10:00:00.000Z"/>')
  })
})
