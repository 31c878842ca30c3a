import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import { writeCsdlJson } from '../../../server/odata/metadata/write-csdl-json.ts'
import { demoModel } from './demo-model.ts'
import { fixtureModel } from './fixture-model.ts'

type Json = Record<string, any>

let model: Model
let json: Json
let camel: Json

beforeAll(async () => {
  model = await demoModel()
  json = writeCsdlJson(buildCsdl(model, namingPolicy(false)))
  camel = writeCsdlJson(buildCsdl(model, namingPolicy(true)))
})

describe('writeCsdlJson on the demo model', () => {
  it('names the version, the container and the vocabularies it uses', () => {
    expect(json.$Version).toBe('4.01')
    expect(json.$EntityContainer).toBe('entityctl.Container')
    expect(json.$Reference['https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.xml']).toEqual({
      $Include: [{ $Namespace: 'Org.OData.Core.V1', $Alias: 'Core' }],
    })
    expect(Object.keys(json.$Reference)).toHaveLength(4)
  })

  it('writes properties with JSON defaults: no $Type for strings, $Nullable only when true', () => {
    const customer = json.entityctl.Customer
    expect(customer.$Kind).toBe('EntityType')
    expect(customer.$Key).toEqual(['Guid'])
    expect(customer.Guid).toEqual({ $Type: 'Edm.Guid', '@Common.Label': 'Id', '@Core.ComputedDefaultValue': true })
    expect(customer.Name).toEqual({ $MaxLength: 100, '@Common.Label': 'Name' })
    expect(customer.Email).toEqual({
      $Nullable: true,
      $MaxLength: 254,
      '@Common.Label': 'E-mail',
      '@Core.Description': 'Where invoices are sent',
    })
    expect(customer.CreditLimit).toEqual({ $Type: 'Edm.Decimal', $Nullable: true, $Precision: 12, $Scale: 2, '@Common.Label': 'Credit limit' })
  })

  it('writes bounds, computed values and the enumeration type', () => {
    expect(json.entityctl.OrderLine.Quantity).toEqual({ $Type: 'Edm.Int32', '@Validation.Minimum': 1, '@Validation.Maximum': 10 })
    expect(json.entityctl.Order.Total['@Core.Computed']).toBe(true)
    expect(json.entityctl.Order.Status).toEqual({ $Type: 'entityctl.OrderStatus', $Nullable: true, '@Core.ComputedDefaultValue': true })
    expect(json.entityctl.OrderStatus).toEqual({ $Kind: 'EnumType', Open: 0, Closed: 1 })
  })

  it('writes the foreign key, the constraint, the partner and the delete action', () => {
    const order = json.entityctl.Order
    expect(order.CustomerGuid).toEqual({ $Type: 'Edm.Guid' })
    expect(order.Customer).toEqual({
      $Kind: 'NavigationProperty',
      $Type: 'entityctl.Customer',
      $Partner: 'Orders',
      $ReferentialConstraint: { CustomerGuid: 'Guid' },
    })
    expect(order.Lines).toEqual({
      $Kind: 'NavigationProperty',
      $Type: 'entityctl.OrderLine',
      $Collection: true,
      $Partner: 'Order',
      $OnDelete: 'Cascade',
    })
  })

  it('groups operation overloads by name with bound parameters and return types', () => {
    expect(json.entityctl.OpenSince).toEqual([
      {
        $Kind: 'Function',
        $IsBound: true,
        $EntitySetPath: 'bindingParameter',
        $Parameter: [
          { $Name: 'bindingParameter', $Type: 'entityctl.Order', $Collection: true },
          { $Name: 'before', $Type: 'Edm.Date' },
        ],
        $ReturnType: { $Type: 'entityctl.Order', $Collection: true },
        '@Core.Description': 'Open orders placed before a date',
      },
    ])
    expect(json.entityctl.Revenue).toEqual([
      {
        $Kind: 'Function',
        $IsBound: true,
        $Parameter: [{ $Name: 'bindingParameter', $Type: 'entityctl.Customer' }],
        $ReturnType: { $Type: 'Edm.Decimal', $Nullable: true, $Precision: 14, $Scale: 2 },
        '@Core.Description': 'Sum of the totals of all orders of this customer',
      },
    ])
    expect(json.entityctl.Close).toEqual([
      {
        $Kind: 'Action',
        $IsBound: true,
        $Parameter: [{ $Name: 'bindingParameter', $Type: 'entityctl.Order' }],
        '@Core.Description': 'Closes the order',
      },
    ])
    expect(json.entityctl.Reprice[0].$Parameter.slice(1)).toEqual([
      { $Name: 'category' },
      { $Name: 'percent', $Type: 'Edm.Decimal', $Precision: 6, $Scale: 2 },
    ])
  })

  it('writes entity sets as collections with navigation bindings and whether $search works', () => {
    const container = json.entityctl.Container
    expect(container.$Kind).toBe('EntityContainer')
    expect(container['@Capabilities.KeyAsSegmentSupported']).toBe(true)
    expect(container.Orders).toEqual({
      $Collection: true,
      $Type: 'entityctl.Order',
      $NavigationPropertyBinding: { Customer: 'Customers', Lines: 'OrderLines' },
      '@Core.OptimisticConcurrency': [],
      '@Capabilities.SearchRestrictions': { Searchable: false },
    })
    expect(container.Customers['@Capabilities.SearchRestrictions']).toEqual({ Searchable: true })
    expect(container.Products.$NavigationPropertyBinding).toBeUndefined()
  })
})

describe('writeCsdlJson with EnableLowerCamelCase', () => {
  it('lower-cases member names but not type, enumeration or set names', () => {
    const order = camel.entityctl.Order
    expect(order.$Key).toEqual(['guid'])
    expect(order.customerGuid).toEqual({ $Type: 'Edm.Guid' })
    expect(order.customer.$ReferentialConstraint).toEqual({ customerGuid: 'guid' })
    expect(order.lines.$Partner).toBe('order')
    expect(order.status.$Type).toBe('entityctl.OrderStatus')
    expect(camel.entityctl.openSince[0].$Parameter[1].$Name).toBe('before')
    expect(camel.entityctl.Container.OrderLines.$NavigationPropertyBinding).toEqual({ order: 'Orders', product: 'Products' })
  })
})

describe('writeCsdlJson on the fixture model', () => {
  const fixture = writeCsdlJson(buildCsdl(fixtureModel(), namingPolicy(false))) as Json
  const schema = fixture.entityctl

  it('writes set restrictions as records of property paths', () => {
    const restrictions = { NonFilterableProperties: [{ $PropertyPath: 'Secret' }, { $PropertyPath: 'Age' }] }
    expect(schema[fixture.$EntityContainer.split('.')[1]].Tickets['@Capabilities.FilterRestrictions']).toEqual(restrictions)
  })

  it('writes optional parameters last, with their defaults', () => {
    expect(schema.Escalate[0].$Parameter.map((p: Json) => p.$Name)).toEqual(['bindingParameter', 'level', 'times', 'reason', 'notify'])
    expect(schema.Escalate[0].$Parameter[4]).toEqual({
      $Name: 'notify',
      $Type: 'Edm.Boolean',
      $Nullable: true,
      '@Core.OptionalParameter': { DefaultValue: 'true' },
    })
  })

  it('keeps plugin text as it is: JSON needs no replacement characters', () => {
    expect(schema.Ticket.Subject['@Core.Description']).toContain('\u0001bell')
  })
})
