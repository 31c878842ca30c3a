import { beforeAll, describe, expect, it } from 'vitest'
import { PluginError } from '../../../server/model/plugin-error.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import type { Csdl, CsdlEntityType } from '../../../server/odata/metadata/csdl.ts'
import { entity, method, p } from '../../../server/plugin.ts'
import { demoModel } from './demo-model.ts'
import { fixtureModel, modelOf } from './fixture-model.ts'

/** What the XSD cannot check: every name a document uses resolves inside it. */
function danglingReferences(csdl: Csdl): string[] {
  const { namespace, types, operations, container } = csdl.schema
  const problems: string[] = []
  const entityTypes = new Map(types.filter((t): t is CsdlEntityType => t.kind === 'EntityType').map((t) => [`${namespace}.${t.name}`, t]))
  const known = new Set([...types.map((t) => `${namespace}.${t.name}`)])
  const resolves = (type: string) => type.startsWith('Edm.') || known.has(type)
  for (const type of entityTypes.values()) {
    const properties = new Set(type.properties.map((p) => p.name))
    for (const key of type.key) if (!properties.has(key)) problems.push(`${type.name}: key ${key}`)
    for (const p of type.properties) if (!resolves(p.type)) problems.push(`${type.name}.${p.name}: type ${p.type}`)
    for (const nav of type.navigationProperties) {
      const target = entityTypes.get(nav.type)
      if (!target) problems.push(`${type.name}.${nav.name}: type ${nav.type}`)
      for (const c of nav.referentialConstraints) {
        if (!properties.has(c.property)) problems.push(`${type.name}.${nav.name}: constraint property ${c.property}`)
        if (!target?.properties.some((p) => p.name === c.referencedProperty)) problems.push(`${type.name}.${nav.name}: referenced ${c.referencedProperty}`)
      }
      if (nav.partner) {
        const partner = target?.navigationProperties.find((n) => n.name === nav.partner)
        if (!partner || partner.type !== `${namespace}.${type.name}`) problems.push(`${type.name}.${nav.name}: partner ${nav.partner}`)
        else if (partner.partner !== undefined && partner.partner !== nav.name) problems.push(`${type.name}.${nav.name}: partner not mutual`)
      }
    }
  }
  for (const op of operations) {
    for (const p of op.parameters) if (!resolves(p.type)) problems.push(`${op.name}(${p.name}): type ${p.type}`)
    if (op.returnType && !resolves(op.returnType.type)) problems.push(`${op.name}: return type ${op.returnType.type}`)
  }
  const sets = new Map(container.entitySets.map((s) => [s.name, s]))
  for (const set of container.entitySets) {
    const type = entityTypes.get(set.entityType)
    if (!type) problems.push(`${set.name}: entity type ${set.entityType}`)
    for (const b of set.navigationPropertyBindings) {
      const nav = type?.navigationProperties.find((n) => n.name === b.path)
      if (!nav) problems.push(`${set.name}: binding path ${b.path}`)
      else if (sets.get(b.target)?.entityType !== nav.type) problems.push(`${set.name}: binding target ${b.target}`)
    }
  }
  return problems
}

describe('buildCsdl', () => {
  let demo: Awaited<ReturnType<typeof demoModel>>
  beforeAll(async () => {
    demo = await demoModel()
  })

  it.each([false, true])('resolves every name it uses (lowerCamelCase %s)', (lowerCamelCase) => {
    expect(danglingReferences(buildCsdl(demo, namingPolicy(lowerCamelCase)))).toEqual([])
    expect(danglingReferences(buildCsdl(fixtureModel(), namingPolicy(lowerCamelCase)))).toEqual([])
  })

  it('is a pure function of its inputs, so the result can be cached', () => {
    expect(buildCsdl(demo, namingPolicy(true))).toEqual(buildCsdl(demo, namingPolicy(true)))
  })

  it('publishes one entity type and one canonical set per entity, system entities included', () => {
    const csdl = buildCsdl(demo, namingPolicy(false), { namespace: 'Sales.Service' })
    expect(csdl.schema.namespace).toBe('Sales.Service')
    expect(csdl.schema.container.entitySets.map((s) => s.name)).toEqual([...demo.entities.values()].map((e) => e.setName))
    expect(csdl.schema.container.entitySets.find((s) => s.name === 'Orders')?.entityType).toBe('Sales.Service.Order')
  })

  it('says Responsibilities are read only (the API refuses their writes with 405), and the other sets are not', () => {
    const sets = buildCsdl(demo, namingPolicy(false)).schema.container.entitySets
    const restrictions = (name: string) => sets.find((s) => s.name === name)!.annotations.filter((a) => /^Capabilities\.(Insert|Update|Delete)Restrictions$/.test(a.term))
    expect(restrictions('Responsibilities')).toEqual([
      { term: 'Capabilities.InsertRestrictions', value: { kind: 'Record', properties: { Insertable: { kind: 'Bool', value: false } } } },
      { term: 'Capabilities.UpdateRestrictions', value: { kind: 'Record', properties: { Updatable: { kind: 'Bool', value: false } } } },
      { term: 'Capabilities.DeleteRestrictions', value: { kind: 'Record', properties: { Deletable: { kind: 'Bool', value: false } } } },
    ])
    for (const name of ['Customers', 'Roles', 'Users', 'RoleResponsibilities']) expect(restrictions(name), name).toEqual([])
  })

  it('names the foreign key of a reference <Reference>Guid, nullable as the reference', () => {
    const ticket = buildCsdl(fixtureModel(), namingPolicy(false)).schema.types.find((t) => t.name === 'Ticket') as CsdlEntityType
    expect(ticket.properties.find((p) => p.name === 'OwnerGuid')).toMatchObject({ type: 'Edm.Guid', nullable: true })
    expect(ticket.navigationProperties.find((n) => n.name === 'Owner')).toMatchObject({
      nullable: true,
      referentialConstraints: [{ property: 'OwnerGuid', referencedProperty: 'Guid' }],
    })
  })

  it('gives the partner to the first collection via a reference only, so partners stay mutual', () => {
    const agent = buildCsdl(fixtureModel(), namingPolicy(false)).schema.types.find((t) => t.name === 'Agent') as CsdlEntityType
    expect(agent.navigationProperties.map((n) => [n.name, n.partner, n.onDelete])).toEqual([
      ['Tickets', 'Owner', 'SetNull'],
      ['Watched', undefined, 'SetNull'],
    ])
  })

  it('never lets a generated name take a declared one', () => {
    const csdl = buildCsdl(fixtureModel(), namingPolicy(false))
    expect(csdl.schema.types.filter((t) => t.kind === 'EnumType').map((t) => t.name)).toEqual(['TicketEscalateLevel', 'TicketPriority2'])
    expect(csdl.schema.container.name).toBe('Container2')
  })

  it('keeps a value list that is no identifier list as a string with allowed values', () => {
    const ticket = buildCsdl(fixtureModel(), namingPolicy(false)).schema.types.find((t) => t.name === 'Ticket') as CsdlEntityType
    expect(ticket.properties.find((p) => p.name === 'Stage')).toMatchObject({
      type: 'Edm.String',
      annotations: [{ term: 'Validation.AllowedValues' }],
    })
  })

  it('gives a read method without a result a nullable return type, as a function must have one', () => {
    const ping = buildCsdl(fixtureModel(), namingPolicy(false)).schema.operations.find((o) => o.name === 'Ping')
    expect(ping).toMatchObject({ kind: 'Function', returnType: { type: 'Edm.String', nullable: true } })
  })

  it('references only the vocabularies its annotations use', () => {
    const bare = modelOf({ entities: [entity('Thing', { properties: { Size: p.integer() } })] })
    expect(buildCsdl(bare, namingPolicy(false)).references.map((r) => r.alias)).toEqual(['Core', 'Capabilities', 'Common'])
  })
})

describe('buildCsdl refuses what CSDL cannot say, naming the plugin', () => {
  const fails = (decls: Parameters<typeof modelOf>[0]['entities'], lowerCamelCase = false) => () =>
    buildCsdl(modelOf({ entities: decls }), namingPolicy(lowerCamelCase))

  it('two properties that meet after lower camel casing', () => {
    const Page = entity('Page', { properties: { URL: p.text(), Url: p.text() } })
    expect(fails([Page], false)).not.toThrow()
    expect(fails([Page], true)).toThrow(/Page\.url: two properties/)
    expect(fails([Page], true)).toThrow(PluginError)
  })

  it('a method named like an entity type', () => {
    const Order = entity('Order', { properties: {}, methods: { Customer: method.modify('x', () => undefined) } })
    const Customer = entity('Customer', { properties: {} })
    expect(fails([Order, Customer])).toThrow(/Order\.methods\.Customer: 'Customer' is also the name of an entity type/)
  })

  it('a read and a modify method of the same name', () => {
    const Order = entity('Order', { properties: {}, methods: { Archive: method.modify('x', () => undefined) } })
    const Customer = entity('Customer', { properties: {}, methods: { Archive: method.read('x', { returns: p.integer() }, () => 1) } })
    expect(fails([Order, Customer])).toThrow(/Customer\.methods\.Archive: 'Archive' is also a modify method of Order/)
  })

  it('allows the same method name on two entities as overloads of one kind', () => {
    const Order = entity('Order', { properties: {}, methods: { Archive: method.modify('x', () => undefined) } })
    const Customer = entity('Customer', { properties: {}, methods: { Archive: method.modify('y', { static: true }, () => undefined) } })
    expect(buildCsdl(modelOf({ entities: [Order, Customer] }), namingPolicy(false)).schema.operations.map((o) => o.name)).toEqual(['Archive', 'Archive'])
  })

  it('a parameter named like the binding parameter', () => {
    const Order = entity('Order', { properties: {}, methods: { Go: method.modify('x', { params: { bindingParameter: p.text() } }, () => undefined) } })
    expect(fails([Order])).toThrow(/reserved/)
  })

  it('two methods of one entity that meet after lower camel casing', () => {
    const Order = entity('Order', { properties: {}, methods: { Close: method.modify('x', () => undefined), close: method.modify('y', () => undefined) } })
    expect(fails([Order], false)).not.toThrow()
    expect(fails([Order], true)).toThrow(/Order\.methods\.close: two methods of Order have the public name 'close'/)
  })

  it('two parameters that meet after lower camel casing', () => {
    const Order = entity('Order', { properties: {}, methods: { Go: method.modify('x', { params: { X: p.text(), x: p.integer() } }, () => undefined) } })
    expect(fails([Order], false)).not.toThrow()
    expect(fails([Order], true)).toThrow(/Order\.methods\.Go\.x: two parameters have this public name/)
  })
})
