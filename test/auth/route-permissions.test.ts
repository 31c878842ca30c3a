// Every route of the service, sent as principals lacking each permission it needs (issue 15:
// authorization is one stage, server/odata/semantic/authorize.ts). The routes come from the
// real app's router, so a route added without a line in ROUTES fails here; every other path
// under /api goes to the OData stage (server/http/app.ts), whose routes are enumerated from the model (every entity set × reading it, its count, one entity, each
// navigation and its count, $expand, $select and $filter/$orderby/$apply paths through each
// navigation, $compute through each, create with deep inserts, update, delete, setting and removing each $ref link,
// each method), so a new entity, navigation or method is covered without a line here; and every
// method the service allows on each of those paths (its 405 answer's Allow header) must have a
// row, so a write added to a path fails here until it has one. The principals are the demo's
// (install.sh): users whose roles lack a permission, a supervisor whose role tree lacks it, a
// user whose supervisor has it, and a PAT scoped to one unrelated responsibility.
//
// Each request is expected to be 403 when the principal lacks any permission the request needs
// (decisions.md, "Roles and permissions") and to succeed when it holds them all: the positive
// half keeps the negative half from passing on a broken route, and the other way round.

import { METHODS } from 'node:http'
import type Router from '@koa/router'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { createApp } from '../../server/http/app.ts'
import { createServices } from '../../server/start.ts'
import type { MethodDecl, Permission, PropertyDecl } from '../../server/model/declarations.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { EntityModel, Model } from '../../server/model/model.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { ADMIN, call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { basic, tenantPool } from './helpers.ts'

/** What each fixed route of the app's router is, and so how this file tests it. A route not listed fails the first test. */
const ROUTES: Record<string, string> = {
  'POST /api/auth/signin': 'credentials: open, reaches no entity',
  'POST /api/auth/refresh': 'credentials: open, reaches no entity',
  'HEAD,GET /api/roles/tree': 'role tree: read on Role',
  'POST /api/user/pats': 'own PATs: an interactive sign-in, no PAT',
  'HEAD,GET /api/user/pats': 'own PATs: an interactive sign-in, no PAT',
  'POST /api/user/pats/:id/revoke': 'own PATs: an interactive sign-in, no PAT',
  'POST /api/user/pats/:id/regenerate': 'own PATs: an interactive sign-in, no PAT',
  'POST /api/workflow': 'workflow: its requests pass the OData routes',
  'POST /api/workflow/commit': 'workflow: its requests pass the OData routes',
  'POST /api/workflow/abort': 'workflow: its requests pass the OData routes',
  'HEAD,GET /api/openapi.json': 'OpenAPI document: any credentials, as $metadata; reaches no entity',
  'HEAD,GET /api/explorer': 'explorer page: open, a fixed HTML file, reaches no entity',
  'HEAD,GET /api/explorer/:asset': 'explorer assets: open, a fixed list of static files, reaches no entity',
}

/**
 * The demo's role tree (install.sh) and who holds what; `pat` is clerk's PAT scoped to CloseOrders,
 * `customersPat` manager's scoped to MaintainCustomers (it creates customers, and may not change orders).
 */
const PRINCIPALS: Record<string, readonly string[]> = {
  clerk: ['TakeOrders', 'CloseOrders'],
  manager: ['MaintainCustomers', 'TakeOrders', 'CloseOrders', 'MaintainProducts'],
  keeper: ['MaintainProducts'],
  auditor: ['ReadReports'],
  pat: ['CloseOrders'],
  customersPat: ['MaintainCustomers'],
}

interface Need {
  readonly entity: EntityModel
  readonly permission: Permission
}

interface Route {
  readonly name: string
  readonly set: string
  readonly method: string
  /** The path after /api/, given the key of a fresh entity to write to (victim) where it needs one. */
  readonly path: (victim: string) => string
  readonly needs: readonly Need[]
  /** Makes the body; may create what it binds (as the admin). */
  readonly body?: () => Promise<unknown>
  /** Makes the entity a PATCH, PUT or DELETE writes to. */
  readonly victim?: () => Promise<string>
  /** Refused to everyone, the admin too, with this status (writes to Responsibilities: 405; routes the service lacks: 404, 501). */
  readonly refused?: number
  /** What a principal holding the permissions gets when only the data refuses it: 400 for removing a required link. */
  readonly granted?: number
}

let server: TestServer
let model: Model
let router: Router
let admin: string
const credentials: Record<string, Record<string, string>> = {}
const keys: Record<string, string> = {}
let routes: Route[] = []
let counter = 0

const send = (who: Record<string, string>, method: string, path: string, body?: unknown) =>
  call(`${server.api}/${path}`, { method, headers: who, body })
const asAdmin = (method: string, path: string, body?: unknown) => send({ Authorization: `Bearer ${admin}` }, method, path, body)

async function created(path: string, body: unknown): Promise<string> {
  const response = await asAdmin('POST', path, body)
  if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${response.text}`)
  return response.body.Guid
}

async function guidOf(set: string, filter: string): Promise<string> {
  const response = await asAdmin('GET', `${set}?$select=Guid&$filter=${filter}`)
  return response.body.value[0].Guid
}

beforeAll(async () => {
  const users = ['clerk', 'manager', 'keeper', 'auditor'].map((username) => ({ username, password: `${username}-password-1` }))
  server = await startTestServer({ users: [ADMIN, ...users] })
  const config = loadConfig(server.configPath, {})
  model = await loadModel(config.Server.PluginsDir)
  router = await routerOf(config, model)
  admin = await server.token()

  // install.sh's demo roles, made through the API as an admin would.
  const role = async (name: string, responsibilities: string[], parent?: string) => {
    const guid = await created('Roles', { Name: name, ...(parent && { 'Parent@odata.bind': `Roles(${parent})` }) })
    for (const responsibility of responsibilities) {
      await created('RoleResponsibilities', { 'Role@odata.bind': `Roles(${guid})`, 'Responsibility@odata.bind': `Responsibilities(${await guidOf('Responsibilities', `Name eq '${responsibility}'`)})` })
    }
    return guid
  }
  const manager = await role('Sales manager', ['MaintainCustomers'])
  keys.Roles = await role('Order clerk', ['TakeOrders', 'CloseOrders'], manager)
  const keeper = await role('Catalogue keeper', ['MaintainProducts'], manager)
  const auditor = await role('Auditor', ['ReadReports'])
  for (const [username, guid] of [['clerk', keys.Roles], ['manager', manager], ['keeper', keeper], ['auditor', auditor]]) {
    const link = await created('UserRoles', { 'User@odata.bind': `Users(${await guidOf('Users', `Username eq '${username}'`)})`, 'Role@odata.bind': `Roles(${guid})` })
    if (username === 'clerk') keys.UserRoles = link
  }
  await Promise.all(users.map(async ({ username, password }) => (credentials[username] = { Authorization: `Bearer ${await server.token(server.tenants[0], username, password)}` })))
  keys.Responsibilities = await guidOf('Responsibilities', "Name eq 'TakeOrders'")
  const pat = await send(credentials.clerk, 'POST', 'user/pats', {
    name: 'closer',
    expirationDays: 1,
    responsibilityIds: [await guidOf('Responsibilities', "Name eq 'CloseOrders'")],
  })
  expect(pat.status, pat.text).toBe(200)
  credentials.pat = basic(pat.body.secret)
  const customersPat = await send(credentials.manager, 'POST', 'user/pats', {
    name: 'customers',
    expirationDays: 1,
    responsibilityIds: [await guidOf('Responsibilities', "Name eq 'MaintainCustomers'")],
  })
  expect(customersPat.status, customersPat.text).toBe(200)
  credentials.customersPat = basic(customersPat.body.secret)
  credentials.admin = { Authorization: `Bearer ${admin}` }

  // One entity of each set, every reference set, for the reads.
  keys.Users = await guidOf('Users', "Username eq 'admin'")
  keys.RoleResponsibilities = await guidOf('RoleResponsibilities', `Role/Guid eq ${keys.Roles}`)
  keys.Customers = await created('Customers', { Name: 'Route customer', Country: 'DE' })
  keys.Products = await created('Products', { Code: 'ROUTE', Name: 'Route product', Price: 2, Category: 'Route' })
  const order = await asAdmin('POST', 'Orders?$expand=Lines', {
    Number: 1,
    'Customer@odata.bind': `Customers(${keys.Customers})`,
    Lines: [{ Quantity: 1, 'Product@odata.bind': `Products(${keys.Products})` }],
  })
  keys.Orders = order.body.Guid
  keys.OrderLines = order.body.Lines[0].Guid
  for (const entity of model.entities.values()) if (!keys[entity.setName]) throw new Error(`no entity of ${entity.setName} to read: add one above`)
  routes = odataRoutes(model)
})

afterAll(async () => {
  await server?.stop()
})

/** The app's router, built as `entityctl serve` builds it (its pools are never opened). */
async function routerOf(config: ReturnType<typeof loadConfig>, model: Model): Promise<Router> {
  const tenants = new TenantRegistry(config, model, testDatabaseUrl())
  const services = createServices({ config, model, tenants, logger: pino({ level: 'silent' }) })
  const app = createApp(services)
  const dispatch = app.middleware.find((middleware) => 'router' in middleware) as unknown as { router: Router }
  await services.close()
  await tenants.close()
  return dispatch.router
}

/** A body that creates one entity of the set; values are fresh, so bodies never collide. */
const BODIES: Record<string, () => Promise<Record<string, unknown>>> = {
  Users: async () => ({ Username: `route-user-${++counter}` }),
  Roles: async () => ({ Name: `Route role ${++counter}` }),
  Responsibilities: async () => ({ Name: `Route responsibility ${++counter}` }),
  UserRoles: async () => ({ 'User@odata.bind': `Users(${await created('Users', await BODIES.Users())})`, 'Role@odata.bind': `Roles(${await created('Roles', await BODIES.Roles())})` }),
  RoleResponsibilities: async () => ({ 'Role@odata.bind': `Roles(${await created('Roles', await BODIES.Roles())})`, 'Responsibility@odata.bind': `Responsibilities(${keys.Responsibilities})` }),
  Customers: async () => ({ Name: `Route customer ${++counter}`, Country: 'DE' }),
  Products: async () => ({ Code: `R${++counter}`, Name: 'Route product', Price: 1, Category: 'Route' }),
  Orders: async () => ({ Number: 1000 + ++counter, 'Customer@odata.bind': `Customers(${keys.Customers})` }),
  // Each line in an order of its own: every line written recomputes its order's total, and one
  // order shared by the hundreds of lines these tests write at once starved a writer of it
  // (ten optimistic attempts lost, a 409: a hot row, not a permission).
  OrderLines: async () => ({ Quantity: 1, 'Order@odata.bind': `Orders(${await created('Orders', await BODIES.Orders())})`, 'Product@odata.bind': `Products(${keys.Products})` }),
}

function bodyOf(entity: EntityModel): () => Promise<Record<string, unknown>> {
  const body = BODIES[entity.setName]
  if (!body) throw new Error(`no body to create ${entity.setName}: add one to BODIES`)
  return body
}

/** Everything the OData routes answer, for every entity set of the model. */
function odataRoutes(model: Model): Route[] {
  const list: Route[] = []
  const read = (...entities: EntityModel[]): Need[] => entities.map((entity) => ({ entity, permission: 'read' }))
  // What a body of BODIES binds (its required references, `Customer@odata.bind`): read on each
  // type, as a method's parameter naming an entity needs it. `except` is a reference the body leaves out.
  const binds = (of: EntityModel, except?: string): Need[] =>
    read(...[...of.properties.values()].flatMap((p) => (p.kind === 'reference' && p.decl.required && p.name !== except ? [p.target] : [])))
  for (const entity of model.entities.values()) {
    const set = entity.setName
    const k = keys[set]
    const body = bodyOf(entity)
    const refused = entity.name === 'Responsibility' ? 405 : undefined
    const victim = refused ? async () => k : () => body().then((b) => created(set, b))
    list.push(
      { name: `${set}`, set, method: 'GET', path: () => set, needs: read(entity) },
      { name: `${set} with its count`, set, method: 'GET', path: () => `${set}?$count=true&$top=1`, needs: read(entity) },
      { name: `${set}/$count`, set, method: 'GET', path: () => `${set}/$count`, needs: read(entity) },
      { name: `${set}(k)`, set, method: 'GET', path: () => `${set}(${k})`, needs: read(entity) },
      { name: `${set}/k`, set, method: 'GET', path: () => `${set}/${k}?$select=Title`, needs: read(entity) },
      { name: `POST ${set}`, set, method: 'POST', path: () => set, body, needs: [{ entity, permission: 'create' }, ...binds(entity)], refused },
      { name: `PATCH ${set}(k)`, set, method: 'PATCH', path: (v) => `${set}(${v})`, body, victim, needs: [{ entity, permission: 'update' }, ...binds(entity)], refused },
      { name: `PUT ${set}(k)`, set, method: 'PUT', path: (v) => `${set}(${v})`, body, victim, needs: [{ entity, permission: 'update' }, ...binds(entity)], refused },
      { name: `DELETE ${set}(k)`, set, method: 'DELETE', path: (v) => `${set}(${v})`, victim, needs: [{ entity, permission: 'delete' }], refused },
      { name: `${set}(k)/Title`, set, method: 'GET', path: () => `${set}(${k})/Title`, needs: read(entity) },
      { name: `${set}(k)/Title/$value`, set, method: 'GET', path: () => `${set}(${k})/Title/$value`, needs: read(entity) },
      { name: `${set}/$ref`, set, method: 'GET', path: () => `${set}/$ref`, needs: read(entity) },
      { name: `${set}(k)/$ref`, set, method: 'GET', path: () => `${set}(${k})/$ref`, needs: read(entity) },
    )
    for (const navigation of entity.properties.values()) {
      if (navigation.kind === 'scalar') continue
      const nav = navigation.name
      const target = navigation.target
      const both = read(entity, target)
      list.push(
        { name: `${set}(k)/${nav}`, set, method: 'GET', path: () => `${set}(${k})/${nav}`, needs: both },
        { name: `${set}?$expand=${nav}`, set, method: 'GET', path: () => `${set}?$expand=${nav}`, needs: both },
        { name: `${set}(k)/${nav}/$ref`, set, method: 'GET', path: () => `${set}(${k})/${nav}/$ref`, needs: both },
        { name: `${set}?$expand=${nav}/$ref`, set, method: 'GET', path: () => `${set}?$expand=${nav}/$ref`, needs: both },
        { name: `${set}(k)?$expand=${nav}`, set, method: 'GET', path: () => `${set}(${k})?$expand=${nav}`, needs: both },
        { name: `${set}?$select=${nav}/Title`, set, method: 'GET', path: () => `${set}?$select=${nav}/Title`, needs: both },
        // A write's reply: the written entity is its writer's to see; what it expands is not.
        { name: `POST ${set}?$expand=${nav}`, set, method: 'POST', path: () => `${set}?$expand=${nav}`, body, needs: [{ entity, permission: 'create' }, ...binds(entity), ...read(target)], refused },
        { name: `PATCH ${set}(k)?$expand=${nav}`, set, method: 'PATCH', path: (v) => `${set}(${v})?$expand=${nav}`, body, victim, needs: [{ entity, permission: 'update' }, ...binds(entity), ...read(entity, target)], refused },
      )
      // $ref writes: an update of the entity holding the reference, whichever side the path names.
      // What they link is fresh, so no link meets a natural key (a role's responsibility) twice.
      const fresh = async (of: EntityModel) => (of.name === 'Responsibility' ? keys[of.setName] : created(of.setName, await bodyOf(of)()))
      if (navigation.kind === 'reference') {
        // The link names an existing target: read on it, as a bind does.
        const update: Need[] = [{ entity, permission: 'update' }]
        const link = async () => ({ '@odata.id': `${target.setName}(${await fresh(target)})` })
        list.push(
          { name: `PUT ${set}(k)/${nav}/$ref`, set, method: 'PUT', path: (v) => `${set}(${v})/${nav}/$ref`, body: link, victim, needs: [...update, ...read(target)], refused },
          { name: `DELETE ${set}(k)/${nav}/$ref`, set, method: 'DELETE', path: (v) => `${set}(${v})/${nav}/$ref`, victim, needs: update, refused, granted: navigation.decl.required ? 400 : undefined },
        )
      } else {
        const inverse = navigation.inverse
        const update: Need[] = [{ entity: target, permission: 'update' }]
        // The DELETE's victim is a fresh parent with a member linked to it, whose link it removes.
        const members = new Map<string, string>()
        const parentWithMember = async () => {
          const parent = await victim()
          members.set(parent, await created(target.setName, { ...(await bodyOf(target)()), [`${inverse.name}@odata.bind`]: `${set}(${parent})` }))
          return parent
        }
        list.push(
          // The member's reference is set to the parent the path names: read on both, as a bind needs.
          { name: `POST ${set}(k)/${nav}/$ref`, set, method: 'POST', path: (v) => `${set}(${v})/${nav}/$ref`, body: async () => ({ '@odata.id': `${target.setName}(${await fresh(target)})` }), victim, needs: [...update, ...read(entity, target)] },
          {
            name: `DELETE ${set}(k)/${nav}/$ref?$id`,
            set,
            method: 'DELETE',
            path: (v) => `${set}(${v})/${nav}/$ref?$id=${target.setName}(${members.get(v) ?? v})`,
            victim: parentWithMember,
            needs: update,
            granted: inverse.decl.required ? 400 : undefined,
          },
          // A member through its parent, as OpenUI5 reads a row of a relative list: read on both ends.
          { name: `${set}(k)/${nav}(m)`, set, method: 'GET', path: (v) => `${set}(${v})/${nav}(${members.get(v) ?? v})`, victim: parentWithMember, needs: both },
          { name: `${set}(k)/${nav}(m)/Title`, set, method: 'GET', path: (v) => `${set}(${v})/${nav}(${members.get(v) ?? v})/Title`, victim: parentWithMember, needs: both },
        )
        // A member's own functions and actions, called through its parent: the path is read on
        // both ends, then the method needs what it needs on the canonical path.
        for (const [name, method] of target.methods) {
          if (method.static) continue
          const call = methodCall(model, target, name, method)
          list.push({
            name: `${set}(k)/${nav}(m)/${name}`,
            set,
            method: call.method,
            // The standing keys (the PROPFIND walk) name a member too: keys.Orders is keys.Customers'.
            path: (v) => `${set}(${v})/${nav}(${members.get(v) ?? keys[target.setName]})/${name}${call.query}`,
            body: call.body,
            victim: parentWithMember,
            needs: [...both, ...call.needs],
          })
        }
      }
      if (navigation.kind === 'collection') {
        // A child created through its parent: what creating the child alone, bound to the parent, needs; no more.
        const childRefused = target.name === 'Responsibility' ? 405 : undefined
        list.push({ name: `POST ${set}(k)/${nav}`, set, method: 'POST', path: (v) => `${set}(${v})/${nav}`, victim, body: async () => {
          const child = await bodyOf(target)()
          delete child[`${navigation.inverse.name}@odata.bind`]
          return child
        }, needs: [{ entity: target, permission: 'create' }, ...binds(target)], refused: childRefused })
      }
      if (navigation.kind === 'reference') {
        // Deep insert of the referenced entity instead of binding one.
        const nested = async () => {
          const outer = await body()
          delete outer[`${nav}@odata.bind`]
          return { ...outer, [nav]: await bodyOf(target)() }
        }
        list.push(
          { name: `${set}?$filter=${nav}/Title`, set, method: 'GET', path: () => `${set}?$filter=${nav}/Title ne 'none'`, needs: both },
          { name: `${set}?$orderby=${nav}/Title`, set, method: 'GET', path: () => `${set}?$orderby=${nav}/Title`, needs: both },
          { name: `${set}?$apply=groupby(${nav}/Title)`, set, method: 'GET', path: () => `${set}?$apply=groupby((${nav}/Title))`, needs: both },
          { name: `${set}/$count?$filter=${nav}/Title`, set, method: 'GET', path: () => `${set}/$count?$filter=${nav}/Title ne 'none'`, needs: both },
          { name: `${set}?$compute=${nav}/Title`, set, method: 'GET', path: () => `${set}?$compute=${nav}/Title as Related&$select=Related`, needs: both },
          { name: `${set}(k)?$compute=${nav}/Title`, set, method: 'GET', path: () => `${set}(${k})?$compute=${nav}/Title as Related`, needs: both },
          { name: `POST ${set}?$compute=${nav}/Title`, set, method: 'POST', path: () => `${set}?$compute=${nav}/Title as Related`, body, needs: [{ entity, permission: 'create' }, ...binds(entity), ...read(target)], refused },
          // Responsibilities come from plugins: not even nested in another entity's body.
          { name: `POST ${set} with a new ${nav}`, set, method: 'POST', path: () => set, body: nested, needs: [{ entity, permission: 'create' }, { entity: target, permission: 'create' }, ...binds(entity, nav), ...binds(target)], refused: refused ?? (target.name === 'Responsibility' ? 405 : undefined) },
        )
      } else {
        const inverse = navigation.inverse.name
        const nested = async () => {
          const member = await bodyOf(target)()
          delete member[`${inverse}@odata.bind`]
          return { ...(await body()), [nav]: [member] }
        }
        const binding = async () => ({ ...(await body()), [`${nav}@odata.bind`]: [`${target.setName}(${await fresh(target)})`] })
        const referencing = async () => ({ ...(await body()), [nav]: [{ '@id': `${target.setName}(${await fresh(target)})` }] })
        list.push(
          { name: `${set}(k)/${nav}/$count`, set, method: 'GET', path: () => `${set}(${k})/${nav}/$count`, needs: both },
          { name: `${set}?$filter=${nav}/any()`, set, method: 'GET', path: () => `${set}?$filter=${nav}/any()`, needs: both },
          { name: `${set}?$filter=${nav}/$count`, set, method: 'GET', path: () => `${set}?$filter=${nav}/$count ge 0`, needs: both },
          { name: `${set}?$orderby=${nav}/$count`, set, method: 'GET', path: () => `${set}?$orderby=${nav}/$count`, needs: both },
          { name: `${set}?$compute=${nav}/$count`, set, method: 'GET', path: () => `${set}?$compute=${nav}/$count as Related`, needs: both },
          { name: `${set}?$expand=${nav}($filter=…)`, set, method: 'GET', path: () => `${set}?$expand=${nav}($filter=Title ne 'none';$orderby=Title)`, needs: both },
          { name: `POST ${set} with new ${nav}`, set, method: 'POST', path: () => set, body: nested, needs: [{ entity, permission: 'create' }, { entity: target, permission: 'create' }, ...binds(entity), ...binds(target, inverse)], refused },
          // Binding an existing member names it (read) and moves it to the new parent: a change of the member, as POST …/$ref is.
          { name: `POST ${set} binding an existing ${nav}`, set, method: 'POST', path: () => set, body: binding, needs: [{ entity, permission: 'create' }, ...read(target), { entity: target, permission: 'update' }, ...binds(entity)], refused },
          // The same bind written as OData 4.01 entity references, {"@id": …}.
          { name: `POST ${set} binding an existing ${nav} by @id`, set, method: 'POST', path: () => set, body: referencing, needs: [{ entity, permission: 'create' }, ...read(target), { entity: target, permission: 'update' }, ...binds(entity)], refused },
        )
      }
    }
    for (const [name, method] of entity.methods) {
      const on = method.static ? set : `${set}(${k})`
      const call = methodCall(model, entity, name, method)
      list.push({ name: `${set}/${name}`, set, method: call.method, path: () => `${on}/${name}${call.query}`, body: call.body, needs: call.needs })
    }
  }
  // $batch answers 200 with each part's own status, so it is not a route of this table: its parts
  // go through the very dispatch of the routes above, and test/api/batch.test.ts checks that a part
  // is refused (403) exactly as the same request alone.
  return list
}

/** How a method of `entity` is called: a function by GET with its parameters in the query, an action by POST with a body. */
function methodCall(model: Model, entity: EntityModel, name: string, method: MethodDecl) {
  const params = Object.fromEntries(Object.entries(method.params).map(([param, decl]) => [param, sample(decl)]))
  const returned: Need[] = method.returns && method.returns.kind !== 'scalar' ? [{ entity: model.entities.get(method.returns.target)!, permission: 'read' }] : []
  // An entity a parameter names needs read on its type, as a path reaching it would.
  const named: Need[] = Object.values(method.params).flatMap((decl) => (decl.kind === 'scalar' ? [] : [{ entity: model.entities.get(decl.target)!, permission: 'read' as const }]))
  const needs: Need[] = [{ entity, permission: `execute:${name}` }, ...named, ...returned]
  if (method.kind !== 'read') return { method: 'POST', query: '', body: async () => params, needs }
  const query = new URLSearchParams(params as Record<string, string>).toString()
  return { method: 'GET', query: query ? `?${query}` : '', body: undefined, needs }
}

/** A harmless value for a method parameter. */
function sample(decl: PropertyDecl): unknown {
  if (decl.kind !== 'scalar') return keys.Customers
  switch (decl.type) {
    case 'Date':
      return '2100-01-01'
    case 'Integer':
    case 'Decimal':
    case 'Double':
      return 0
    case 'Boolean':
      return false
    default:
      return 'none'
  }
}

/** Runs `task` for every item, `width` at a time. */
async function inParallel<T>(items: readonly T[], task: (item: T) => Promise<void>, width = 8): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await task(items[next++])
  }
  await Promise.all(Array.from({ length: width }, worker))
}

function grants(principal: string): (need: Need) => boolean {
  const held = PRINCIPALS[principal].map((name) => model.responsibilities.get(name)!.permissions)
  return (need) => held.some((permissions) => permissions[need.entity.name]?.includes(need.permission) ?? false)
}

/** Each entity table as a hash of its rows: equal before and after means nothing was written. */
async function snapshot(): Promise<Record<string, string>> {
  const pool = tenantPool(server)
  try {
    const tables: Record<string, string> = {}
    for (const entity of model.entities.values()) {
      const { rows } = await pool.query(`SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS hash FROM "${entity.table}" t`)
      tables[entity.setName] = rows[0].hash
    }
    return tables
  } finally {
    await pool.end()
  }
}

describe('the routes of the service', () => {
  it('are all known to this test, so a new one cannot go untested', () => {
    const all = (methods: string[]) => METHODS.every((method) => methods.includes(method))
    const registered = router.stack.filter((layer) => layer.methods.length > 0).map((layer) => `${all(layer.methods) ? 'ALL' : layer.methods.join(',')} ${layer.path}`)
    expect(registered.filter((route) => !(route in ROUTES)), 'routes this test does not know: add them to ROUTES with what they need').toEqual([])
    expect(Object.keys(ROUTES).filter((route) => !registered.includes(route)), 'ROUTES lists routes the app no longer has').toEqual([])
  })

  it('have a row for every method the service allows on each OData path, $ref writes included', async () => {
    // The service's own list: a method no path takes (PROPFIND) is answered 405 with the methods it allows.
    const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
    const shape = (path: string) => path.split('?')[0].replace(new RegExp(`/${GUID.source}`, 'g'), '(k)').replace(GUID, 'k')
    const paths = new Set(routes.map((route) => route.path(keys[route.set]).split('?')[0]))
    const walked = new Set(routes.map((route) => `${route.method} ${shape(route.path(keys[route.set]))}`))
    const unwalked: string[] = []
    await inParallel([...paths], async (path) => {
      const answer = await asAdmin('PROPFIND', path)
      if (answer.status !== 405) unwalked.push(`PROPFIND ${path}: expected 405 naming what it allows, got ${answer.status}`)
      for (const method of answer.headers.get('Allow')?.split(/,\s*/) ?? []) if (!walked.has(`${method} ${shape(path)}`)) unwalked.push(`${method} ${shape(path)}`)
    })
    expect(unwalked, 'methods the service allows that no row walks: add rows to odataRoutes()').toEqual([])
  })

  it('cover every entity set of the model, and each is refused to someone', () => {
    for (const entity of model.entities.values()) expect(routes.some((route) => route.name === `${entity.setName}(k)`), entity.setName).toBe(true)
    for (const route of routes.filter((route) => !route.refused)) {
      const refusedTo = Object.keys(PRINCIPALS).filter((principal) => !route.needs.every(grants(principal)))
      expect(refusedTo.length, `no principal lacks what ${route.name} needs: add one`).toBeGreaterThan(0)
    }
  })
})

describe('a principal lacking a permission', () => {
  it('gets the issue’s cases refused: reading one entity needs read too', async () => {
    const clerkReadsAdmin = await send(credentials.clerk, 'GET', `Users(${keys.Users})?$select=Username,HasFullAccess,Disabled`)
    expect(clerkReadsAdmin.status, clerkReadsAdmin.text).toBe(403)
    expect(clerkReadsAdmin.body.error.message).toBe('Reading Users needs the read permission on User, which your responsibilities do not grant.')
    for (const path of [`Customers(${keys.Customers})`, `Users(${keys.Users})`, `Responsibilities(${keys.Responsibilities})`, `Orders(${keys.Orders})/Customer`]) {
      const response = await send(credentials.pat, 'GET', path)
      expect(response.status, `${path}: ${response.text}`).toBe(403)
    }
    expect((await send(credentials.pat, 'GET', `Orders(${keys.Orders})/Customer`)).body.error.message).toMatch(/^Reading Orders\(…\)\/Customer needs the read permission on Customer/)
    expect((await send(credentials.keeper, 'GET', `Orders(${keys.Orders})/Lines`)).body.error.message).toMatch(/^Reading Orders\(…\)\/Lines needs the read permission on Order/)
    const deep = await send(credentials.clerk, 'POST', 'Orders', { Number: 99, Customer: { Name: 'Nested', Country: 'DE' } })
    expect(deep.body.error.message).toBe('Creating Customers (deep insert at Customer) needs the create permission on Customer, which your responsibilities do not grant.')
  })

  // About 1,500 requests: seconds alone, but like the test of the answered requests below it
  // gets the time a loaded machine needs (a CI run with other servers on the cluster took 30 s).
  it('gets 403 naming what it lacks on every route that needs it, and nothing is written', { timeout: 180_000 }, async () => {
    // One body per route and one entity per kind of victim serve every refusal: nothing changes them.
    const prepared = []
    const victims = new Map<() => Promise<string>, string>()
    for (const route of routes) {
      if (route.victim && !victims.has(route.victim)) victims.set(route.victim, await route.victim())
      prepared.push({ route, body: await route.body?.(), victim: route.victim ? victims.get(route.victim)! : '' })
    }
    const before = await snapshot()
    const failures: string[] = []
    const refusals = prepared.flatMap(({ route, body, victim }) =>
      [...Object.keys(PRINCIPALS), ...(route.refused ? ['admin'] : [])].map((principal) => ({ route, body, victim, principal })),
    )
    // Refusals write nothing, so they go several at a time.
    await inParallel(refusals, async ({ route, body, victim, principal }) => {
      const missing = principal === 'admin' ? [] : route.needs.filter((need) => !grants(principal)(need))
      if (missing.length === 0 && !route.refused) return
      const response = await send(credentials[principal], route.method, route.path(victim), body)
      const expected = route.refused ?? 403
      const named = missing.some((need) => response.body?.error?.message?.includes(`needs the ${need.permission} permission on ${need.entity.name}`))
      if (response.status !== expected || (expected === 403 && (response.body?.error?.code !== 'Forbidden' || !named))) {
        failures.push(`${principal} ${route.method} ${route.path(victim)}: expected ${expected} for lacking ${missing.map((n) => `${n.permission} on ${n.entity.name}`).join(', ')}; got ${response.status} ${response.text.slice(0, 200)}`)
      }
    })
    expect(failures).toEqual([])
    expect(await snapshot()).toEqual(before)
  })

  it('gets 403 for the role tree without read on Role, and a PAT on the PAT routes', async () => {
    for (const principal of Object.keys(PRINCIPALS)) {
      const tree = await send(credentials[principal], 'GET', 'roles/tree')
      expect(tree.status, principal).toBe(403)
      expect(tree.body.error.message).toBe('Reading the role tree needs the read permission on Role, which your responsibilities do not grant.')
    }
    expect((await send(credentials.admin, 'GET', 'roles/tree')).status).toBe(200)
    expect((await send(credentials.pat, 'GET', 'user/pats')).status).toBe(403)
    expect((await send(credentials.pat, 'POST', 'user/pats', { name: 'minted', expirationDays: 1, responsibilityIds: [] })).status).toBe(403)
    expect((await send(credentials.clerk, 'GET', 'user/pats')).status).toBe(200)
  })

  it('gets the OpenAPI document as it gets $metadata, and the explorer without credentials', async () => {
    for (const principal of Object.keys(PRINCIPALS)) {
      for (const path of ['openapi.json', '$metadata']) expect((await send(credentials[principal], 'GET', path)).status, `${principal} ${path}`).toBe(200)
    }
    expect((await send({}, 'GET', 'openapi.json')).status).toBe(401)
    const page = await send({}, 'GET', 'explorer')
    expect(page.status).toBe(200)
    expect(page.headers.get('Content-Type')).toMatch(/^text\/html/)
    expect((await send({}, 'GET', 'explorer/swagger-ui-bundle.js')).status).toBe(200)
    for (const path of ['explorer/Customers', 'explorer/openapi.json', 'explorer/..%2Fopenapi.json']) expect((await send({}, 'GET', path)).status, path).toBe(404)
  })

  it('learns, deleting a customer it may delete, that orders keep it, not how many: it may not count orders', async () => {
    const refused = await send(credentials.customersPat, 'DELETE', `Customers(${keys.Customers})`)
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error.message).toBe(`Customer ${keys.Customers} still has Orders, which keep it from being deleted; delete or move them first.`)
  })

  it('gets 403 inside a workflow too, whose requests take the same routes', async () => {
    const started = await send(credentials.clerk, 'POST', 'workflow')
    expect(started.status).toBe(200)
    const inside = { ...credentials.clerk, 'Workflow-Id': started.body.workflowId, 'Workflow-Index': '1' }
    const read = await send(inside, 'GET', `Users(${keys.Users})`)
    expect(read.status, read.text).toBe(403)
    expect((await send({ ...inside, 'Workflow-Index': '2' }, 'POST', 'workflow/abort')).status).toBe(200)
  })
})

describe('a principal holding the permissions', () => {
  // Some 300 routes, each for every principal holding what it needs, with fresh entities to
  // write to: a few routes at a time, and more time than a test usually gets, for a loaded machine.
  it('gets the same requests answered, so the refusals above are not vacuous', { timeout: 180_000 }, async () => {
    const failures: string[] = []
    await inParallel(routes.filter((route) => !route.refused), async (route) => {
      const allowed = ['admin', ...Object.keys(PRINCIPALS).filter((principal) => route.needs.every(grants(principal)))]
      await Promise.all(
        allowed.map(async (principal) => {
          const victim = (await route.victim?.()) ?? ''
          const response = await send(credentials[principal], route.method, route.path(victim), await route.body?.())
          const answered = route.granted ? response.status === route.granted : response.status >= 200 && response.status <= 299
          if (!answered) failures.push(`${principal} ${route.method} ${route.path(victim)}: expected ${route.granted ?? 'a success'}, got ${response.status} ${response.text.slice(0, 200)}`)
        }),
      )
    }, 4)
    expect(failures).toEqual([])
  })

  it('loses a read at once when its role is taken away, though the read was planned', async () => {
    const path = `Customers(${keys.Customers})?$select=Name`
    for (let i = 0; i < 3; i++) expect((await send(credentials.manager, 'GET', path)).status).toBe(200)
    const link = await guidOf('UserRoles', "User/Username eq 'manager'")
    const role = (await asAdmin('GET', `UserRoles(${link})?$select=RoleGuid`)).body.RoleGuid
    expect((await asAdmin('DELETE', `UserRoles(${link})`)).status).toBe(204)
    try {
      expect((await send(credentials.manager, 'GET', path)).status).toBe(403)
    } finally {
      await created('UserRoles', { 'User@odata.bind': `Users(${await guidOf('Users', "Username eq 'manager'")})`, 'Role@odata.bind': `Roles(${role})` })
    }
    expect((await send(credentials.manager, 'GET', path)).status).toBe(200)
  })
})
