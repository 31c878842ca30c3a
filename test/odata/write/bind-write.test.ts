// The write binder's tables (server/odata/write/bind-write.ts): a request, as the route and the
// parser leave it, → the bound WritePlan and reply, or the error the request is refused with.
// Pure: no database, no server. Every plan is plain JSON (a workflow stores it), so each case
// also checks that it survives JSON unchanged.

import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AccessContext } from '../../../server/auth/access-context.ts'
import type { Permission } from '../../../server/model/declarations.ts'
import { loadModel } from '../../../server/model/load-plugins.ts'
import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { parseQueryOptions } from '../../../server/odata/parser/query-options-parser.ts'
import { parseResourcePath } from '../../../server/odata/parser/resource-path-parser.ts'
import { bindPath } from '../../../server/odata/semantic/bind-path.ts'
import { bindWrite, type BoundWrite, type MethodTarget, type WriteBinding } from '../../../server/odata/write/bind-write.ts'

const CUSTOMER = '11111111-1111-4111-8111-111111111111'
const PRODUCT = '22222222-2222-4222-8222-222222222222'
const ORDER = '33333333-3333-4333-8333-333333333333'
const LINE = '44444444-4444-4444-8444-444444444444'

let model: Model
let binding: WriteBinding
const naming = namingPolicy(false)

beforeAll(async () => {
  model = await loadModel(fileURLToPath(new URL('../../api/plugins', import.meta.url)))
  binding = {
    model,
    naming,
    query: { maxTop: 1000, maxNodeCount: 100, maxExpansionDepth: 3 },
    body: { maxEntities: 10, maxCollectionMembers: 5 },
    defaultSelect: 'Key',
    serviceRoot: 'http://host/api/',
  }
})

const FULL = access({}, true)

function access(permissions: Record<string, Permission[]>, fullAccess = false): AccessContext {
  return {
    tenant: 't', userGuid: '55555555-5555-4555-8555-555555555555', username: 'u', credential: 'user', fullAccess,
    responsibilities: new Set(), permissions: new Map(Object.entries(permissions).map(([entity, granted]) => [entity, new Set(granted)])),
  }
}

const entity = (name: string) => model.entities.get(name)!
const options = (query = '') => parseQueryOptions(query)

function post(set: string, body: unknown, query = '', caller = FULL): BoundWrite {
  return bindWrite(binding, { kind: 'create', entity: model.sets.get(set)!, body, options: options(query), representation: false }, caller)
}

function patch(name: string, key: string, body: unknown, headers: { ifMatch?: string; ifNoneMatch?: string; put?: boolean; query?: string; representation?: boolean } = {}, caller = FULL): BoundWrite {
  const mode = headers.put ? ('put' as const) : ('patch' as const)
  const preconditions = { ifMatch: headers.ifMatch ?? '', ifNoneMatch: headers.ifNoneMatch ?? '' }
  const request = { kind: 'update' as const, entity: entity(name), key, mode, body, ...preconditions, options: options(headers.query), representation: headers.representation ?? false, answered: headers.representation === true || headers.query !== undefined }
  return bindWrite(binding, request, caller)
}

function callMethod(path: string, httpMethod: string, body: unknown, query = '', caller = FULL): BoundWrite {
  const target = bindPath(model, naming, parseResourcePath(path), 'Default') as MethodTarget
  return bindWrite(binding, { kind: 'call', target, httpMethod, path, body, ifMatch: '', options: options(query) }, caller)
}

/** The plan as a workflow stores it: JSON, and unchanged by the trip. */
function stored(bound: BoundWrite): unknown {
  const json = JSON.parse(JSON.stringify(bound.plan))
  expect(json).toEqual(bound.plan)
  return json
}

function refusal(bind: () => unknown): { code: string; message: string; details?: unknown } {
  try {
    bind()
  } catch (error) {
    const { code, message, details } = error as { code: string; message: string; details?: unknown }
    return { code, message, details }
  }
  throw new Error('bound, not refused')
}

describe('bindWrite: a request → its plan', () => {
  const cases: Array<[string, () => BoundWrite, unknown]> = [
    [
      'POST Customers: public names to declared ones, values parsed (a decimal as given, a date-time normalised)',
      () => post('Customers', { Name: 'Ada', CreditLimit: '12.50' }),
      { format: 1, operations: [{ kind: 'create', entity: 'Customer', values: { Name: 'Ada', CreditLimit: 12.5 }, nested: [], members: [] }] },
    ],
    [
      'POST with the key given: the plan carries it, lower-cased',
      () => post('Customers', { Guid: CUSTOMER.toUpperCase(), Name: 'Ada' }),
      { format: 1, operations: [{ kind: 'create', entity: 'Customer', key: CUSTOMER, values: { Name: 'Ada' }, nested: [], members: [] }] },
    ],
    [
      'POST Orders, deep insert: references bound three ways, the nested line as a nested create',
      () =>
        post('Orders', {
          Number: 7,
          'Customer@odata.bind': `Customers(${CUSTOMER})`,
          Lines: [{ Product: { Guid: PRODUCT }, Quantity: 2 }, { ProductGuid: PRODUCT, Quantity: 1 }],
        }),
      {
        format: 1,
        operations: [
          {
            kind: 'create',
            entity: 'Order',
            values: { Number: 7, Customer: CUSTOMER },
            nested: [
              { property: 'Lines', create: { kind: 'create', entity: 'OrderLine', values: { Product: PRODUCT, Quantity: 2 }, nested: [], members: [] } },
              { property: 'Lines', create: { kind: 'create', entity: 'OrderLine', values: { Product: PRODUCT, Quantity: 1 }, nested: [], members: [] } },
            ],
            members: [],
          },
        ],
      },
    ],
    [
      'POST Orders with its Guid: a deep-inserted line may bind that order, its own parent',
      () => post('Orders', { Guid: ORDER, Number: 7, CustomerGuid: CUSTOMER, Lines: [{ ProductGuid: PRODUCT, Quantity: 1, 'Order@odata.bind': `Orders(${ORDER})` }] }),
      {
        format: 1,
        operations: [
          {
            kind: 'create',
            entity: 'Order',
            key: ORDER,
            values: { Number: 7, Customer: CUSTOMER },
            nested: [{ property: 'Lines', create: { kind: 'create', entity: 'OrderLine', values: { Product: PRODUCT, Quantity: 1, Order: ORDER }, nested: [], members: [] } }],
            members: [],
          },
        ],
      },
    ],
    [
      "POST with its own @odata.type, and a bind by a URL of this service",
      () => post('Orders', { '@odata.type': '#entityctl.Order', Number: 9, 'Customer@odata.bind': `http://HOST/api/Customers(${CUSTOMER})` }),
      { format: 1, operations: [{ kind: 'create', entity: 'Order', values: { Number: 9, Customer: CUSTOMER }, nested: [], members: [] }] },
    ],
    [
      'POST Orders binding existing lines: members by key',
      () => post('Orders', { Number: 8, CustomerGuid: CUSTOMER, 'Lines@odata.bind': [`OrderLines(${LINE})`] }),
      { format: 1, operations: [{ kind: 'create', entity: 'Order', values: { Number: 8, Customer: CUSTOMER }, nested: [], members: [{ property: 'Lines', keys: [LINE] }] }] },
    ],
    [
      'PATCH: only the values given, If-Match kept as its tags',
      () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { ifMatch: 'W/"3", "4"' }),
      { format: 1, operations: [{ kind: 'update', entity: 'Customer', key: CUSTOMER, mode: 'patch', values: { City: 'Oslo' }, ifMatch: ['W/"3"', '"4"'] }] },
    ],
    [
      'PATCH with If-Match: * checks nothing',
      () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { ifMatch: '*' }),
      { format: 1, operations: [{ kind: 'update', entity: 'Customer', key: CUSTOMER, mode: 'patch', values: { City: 'Oslo' } }] },
    ],
    [
      'PUT: every updatable property the body leaves out becomes null; a computed one (Title) is the rules\' to set',
      () => patch('Customer', CUSTOMER, { Name: 'Ada' }, { put: true }),
      {
        format: 1,
        operations: [
          { kind: 'update', entity: 'Customer', key: CUSTOMER, mode: 'put', values: { Name: 'Ada', Email: null, City: null, Country: null, CreditLimit: null } },
        ],
      },
    ],
    [
      'PATCH and POST: a value for a computed property is ignored (Core.Computed)',
      () => patch('Order', ORDER, { Total: 1234.56, Title: 'hack', Status: 'Open' }),
      { format: 1, operations: [{ kind: 'update', entity: 'Order', key: ORDER, mode: 'patch', values: { Status: 'Open' } }] },
    ],
    [
      'a deep-inserted line\'s LineTotal and Title are ignored too',
      () => post('Orders', { Number: 7, CustomerGuid: CUSTOMER, Total: 5, Lines: [{ ProductGuid: PRODUCT, Quantity: 1, LineTotal: 999, Title: 'hack' }] }),
      {
        format: 1,
        operations: [
          {
            kind: 'create',
            entity: 'Order',
            values: { Number: 7, Customer: CUSTOMER },
            nested: [{ property: 'Lines', create: { kind: 'create', entity: 'OrderLine', values: { Product: PRODUCT, Quantity: 1 }, nested: [], members: [] } }],
            members: [],
          },
        ],
      },
    ],
    [
      'PATCH with If-None-Match: its tags, * as one',
      () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { ifNoneMatch: '*' }),
      { format: 1, operations: [{ kind: 'update', entity: 'Customer', key: CUSTOMER, mode: 'patch', values: { City: 'Oslo' }, ifNoneMatch: ['*'] }] },
    ],
    [
      'DELETE: the key and the precondition',
      () => bindWrite(binding, { kind: 'delete', entity: entity('Order'), key: ORDER, ifMatch: 'W/"2"', ifNoneMatch: '', options: options() }, FULL),
      { format: 1, operations: [{ kind: 'delete', entity: 'Order', key: ORDER, ifMatch: ['W/"2"'] }] },
    ],
    [
      'an action: parameters from the body, parsed by their declared types',
      () => callMethod('Products/Reprice', 'POST', { category: 'Tools', percent: 10 }),
      { format: 1, operations: [{ kind: 'call', entity: 'Product', method: 'Reprice', params: { category: 'Tools', percent: 10 }, readOnly: false }] },
    ],
    [
      'a bound action: the key of the entity it is called on',
      () => callMethod(`Orders(${ORDER})/Close`, 'POST', {}),
      { format: 1, operations: [{ kind: 'call', entity: 'Order', method: 'Close', key: ORDER, params: {}, readOnly: false }] },
    ],
    [
      'a function: parameters from the path, a read-only call',
      () => callMethod('Orders/OpenSince(before=2024-01-01)', 'GET', undefined),
      { format: 1, operations: [{ kind: 'call', entity: 'Order', method: 'OpenSince', params: { before: '2024-01-01' }, readOnly: true }] },
    ],
  ]
  for (const [name, bind, plan] of cases) {
    it(name, () => expect(stored(bind())).toEqual(plan))
  }
})

describe('bindWrite: the reply is bound with the write', () => {
  it("a create's $select and $expand become the reply's read", () => {
    const { reply } = post('Customers', { Name: 'Ada' }, '$select=Name&$expand=Orders($select=Number)')
    expect(reply.kind).toBe('entity')
    if (reply.kind !== 'entity') return
    expect(reply.entity.name).toBe('Customer')
    expect(reply.read.expand.map((e) => e.navigation.name)).toEqual(['Orders'])
    // What its context URL names, as a read with the same options would (OData 4.01 §10).
    expect(reply.projection).toEqual(['Name', 'Orders(Number)'])
  })

  it('Prefer: return=representation without $select answers with the whole entity, whatever DefaultSelect says', () => {
    const plain = patch('Customer', CUSTOMER, { City: 'Oslo' })
    const whole = patch('Customer', CUSTOMER, { City: 'Oslo' }, { representation: true })
    if (plain.reply.kind !== 'entity' || whole.reply.kind !== 'entity') throw new Error('an entity reply')
    expect(plain.reply.projection).toEqual(['Guid'])
    // No select list in the context URL: every property, as $select=* reads it.
    expect(whole.reply.projection).toEqual([])
    expect(whole.reply.read.select.length).toBeGreaterThan(plain.reply.read.select.length)
  })

  it('a delete and an action without result answer with nothing; a method returning entities with its read', () => {
    expect(bindWrite(binding, { kind: 'delete', entity: entity('Order'), key: ORDER, ifMatch: '', ifNoneMatch: '', options: options() }, FULL).reply).toEqual({ kind: 'none' })
    expect(callMethod(`Orders(${ORDER})/Close`, 'POST', {}).reply).toEqual({ kind: 'none' })
    expect(callMethod('Tallies/BumpAll', 'POST', {}, '$select=Count').reply.kind).toBe('entities')
    expect(callMethod('Products/Reprice', 'POST', { category: 'Tools', percent: 10 }).reply).toEqual({ kind: 'value', type: 'Edm.Int32', declaredType: 'Edm.Int32' })
  })
})

describe('bindWrite: what it refuses, before anything is written', () => {
  const cases: Array<[string, () => unknown, string, RegExp]> = [
    ['$expand naming nothing', () => post('Customers', { Name: 'Ada' }, '$expand=Nope'), 'InvalidQuery', /Nope/],
    ['$select naming nothing, on a PATCH', () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { query: '$select=Nope' }), 'InvalidQuery', /Nope/],
    ['$filter on a write', () => post('Customers', { Name: 'Ada' }, "$filter=Name eq 'x'"), 'InvalidQuery', /apply to collections/],
    ['$count on a write', () => post('Customers', { Name: 'Ada' }, '$count=true'), 'InvalidQuery', /^\$count: .*apply to collections/],
    ['$search on a write', () => post('Customers', { Name: 'Ada' }, '$search=Ada'), 'InvalidQuery', /^\$search: .*apply to collections/],
    ['$search on an action returning a value', () => callMethod('Products/Reprice', 'POST', { category: 'Tools', percent: 10 }, '$search=Tools'), 'InvalidQuery', /^\$search: Reprice returns no entities/],
    ['$expand on a DELETE', () => bindWrite(binding, { kind: 'delete', entity: entity('Order'), key: ORDER, ifMatch: '', ifNoneMatch: '', options: options('$expand=Nope') }, FULL), 'InvalidQuery', /Nope/],
    ['$expand on an action with no result', () => callMethod(`Orders(${ORDER})/Close`, 'POST', {}, '$expand=Lines'), 'InvalidQuery', /returns nothing/],
    ['an If-Match that is not an entity tag', () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { ifMatch: 'version one' }), 'InvalidRequest', /not an entity tag/],
    ['an If-None-Match that is not an entity tag', () => patch('Customer', CUSTOMER, { City: 'Oslo' }, { ifNoneMatch: '7' }), 'InvalidRequest', /If-None-Match.*not an entity tag/],
    ['a value of the wrong type', () => post('Customers', { Name: 'Ada', CreditLimit: 'lots' }), 'ValidationFailed', /validation/i],
    ['an unknown property', () => patch('Customer', CUSTOMER, { Colour: 'red' }), 'ValidationFailed', /validation/i],
    ['a change of the key', () => patch('Customer', CUSTOMER, { Guid: ORDER }), 'ValidationFailed', /validation/i],
    ['a reference to an entity of another type', () => post('Orders', { Number: 1, 'Customer@odata.bind': `Products(${PRODUCT})` }), 'ValidationFailed', /validation/i],
    ['one Guid for two deep-inserted lines', () => post('Orders', { Number: 1, CustomerGuid: CUSTOMER, Lines: [{ Guid: LINE, ProductGuid: PRODUCT, Quantity: 1 }, { Guid: LINE.toUpperCase(), ProductGuid: PRODUCT, Quantity: 2 }] }), 'ValidationFailed', /Lines\/1\/Guid.*more than once/],
    ['a deep-inserted line creating an order of its own', () => post('Orders', { Number: 1, CustomerGuid: CUSTOMER, Lines: [{ ProductGuid: PRODUCT, Quantity: 1, Order: { Number: 2, CustomerGuid: CUSTOMER } }] }), 'ValidationFailed', /Lines\/0\/Order.*cannot name another/],
    ['a deep-inserted line bound to another order', () => post('Orders', { Number: 1, CustomerGuid: CUSTOMER, Lines: [{ ProductGuid: PRODUCT, Quantity: 1, 'Order@odata.bind': `Orders(${ORDER})` }] }), 'ValidationFailed', /Lines\/0\/Order/],
    ['@odata.type of another entity type', () => post('Products', { '@odata.type': '#entityctl.Order', Code: 'X' }), 'ValidationFailed', /@odata.type.*#entityctl.Product/],
    ['@odata.type of no type of ours', () => post('Products', { '@odata.type': '#Foo.Bar', Code: 'X' }), 'ValidationFailed', /@odata.type/],
    ['a bind to an entity of another service', () => post('Orders', { Number: 1, 'Customer@odata.bind': `http://evil.example/api/Customers(${CUSTOMER})` }), 'ValidationFailed', /this service/],
    ['a nested create on a PATCH', () => patch('Order', ORDER, { Customer: { Name: 'New' } }), 'ValidationFailed', /validation/i],
    ['more nested entities than MaxBodyEntities', () => post('Orders', { Number: 1, Lines: Array.from({ length: 5 }, () => ({ Quantity: 1 })), Customer: { Name: 'x', Orders: Array.from({ length: 5 }, () => ({ Number: 2 })) } }), 'QueryLimitExceeded', /MaxBodyEntities/],
    ['a parameter of the wrong type', () => callMethod('Products/Reprice', 'POST', { category: 'Tools', percent: 'ten' }), 'InvalidParameter', /percent/],
    ['an action called with GET', () => callMethod('Products/Reprice', 'GET', undefined), 'MethodNotAllowed', /GET/],
    ['a write to Responsibilities', () => post('Responsibilities', { Name: 'x' }), 'MethodNotAllowed', /Responsibilities/],
  ]
  for (const [name, bind, code, message] of cases) {
    it(name, () => {
      const refused = refusal(bind)
      expect(refused.code).toBe(code)
      expect(`${refused.message} ${JSON.stringify(refused.details ?? '')}`).toMatch(message)
    })
  }
})

describe('bindWrite: permissions, through the one authorization stage', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['create', () => post('Customers', { Name: 'Ada' }, '', access({ Customer: ['read'] })), /Creating Customers needs the create permission on Customer/],
    [
      'create of a nested entity (deep insert)',
      () => post('Orders', { Number: 1, CustomerGuid: CUSTOMER, Lines: [{ ProductGuid: PRODUCT, Quantity: 1 }] }, '', access({ Order: ['create'] })),
      /Creating OrderLines \(deep insert at Lines\/0\) needs the create permission on OrderLine/,
    ],
    ['update', () => patch('Customer', CUSTOMER, { City: 'Oslo' }, {}, access({ Customer: ['read', 'create'] })), /Changing Customers needs the update permission/],
    ['delete', () => bindWrite(binding, { kind: 'delete', entity: entity('Customer'), key: CUSTOMER, ifMatch: '', ifNoneMatch: '', options: options() }, access({ Customer: ['update'] })), /Deleting Customers needs the delete permission/],
    ["read of what a write's $expand reaches", () => post('Customers', { Name: 'Ada' }, '$expand=Orders', access({ Customer: ['create'] })), /\$expand of Customer.Orders needs the read permission on Order/],
    ['execute', () => callMethod(`Orders(${ORDER})/Close`, 'POST', {}, '', access({ Order: ['read'] })), /Calling Orders\/Close needs the execute:Close permission/],
  ]
  for (const [name, bind, message] of cases) {
    it(name, () => {
      const refused = refusal(bind)
      expect(refused.code).toBe('Forbidden')
      expect(refused.message).toMatch(message)
    })
  }

  it('is checked before the body: a caller without the permission learns nothing of the body', () => {
    expect(refusal(() => post('Customers', { Name: 'Ada', CreditLimit: 'lots' }, '', access({}))).code).toBe('Forbidden')
  })

  it('grants what is held', () => {
    expect(post('Customers', { Name: 'Ada' }, '', access({ Customer: ['create'] })).plan.operations).toHaveLength(1)
  })
})
