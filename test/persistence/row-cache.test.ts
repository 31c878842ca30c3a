// The rows an instance remembers for later writes (persistence/row-cache.ts): one bound for
// the process, the least recently used out first, a scope per opened tenant database, and
// never a row with encrypted properties. That a remembered row is checked by the write that
// takes it is tested with the unit of work (unit-of-work.test.ts).

import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadModel } from '../../server/model/load-plugins.ts'
import { RowCache, type RememberedRow } from '../../server/persistence/row-cache.ts'
import { DEMO_PLUGINS } from '../support/test-server.ts'

const sales = await loadModel(DEMO_PLUGINS)
const patients = await loadModel(fileURLToPath(new URL('../tenancy/plugins', import.meta.url)))
const Product = sales.entities.get('Product')!
const row = (version: number): RememberedRow => ({ values: { Price: version }, version, xmin: String(1000 + version) })

describe('the remembered rows', () => {
  it('keep at most their bound over all tenants, forgetting the least recently used first', () => {
    const cache = new RowCache(3)
    const [a, b] = [cache.scope()!, cache.scope()!]
    a.remember(Product, 'k1', row(1))
    b.remember(Product, 'k2', row(2))
    a.remember(Product, 'k3', row(3))
    expect(a.get(Product, 'k1')?.version).toBe(1) // used again: now the most recent
    b.remember(Product, 'k4', row(4))
    expect(cache.size).toBe(3)
    expect(b.get(Product, 'k2')).toBeUndefined()
    expect(a.get(Product, 'k1')?.version).toBe(1)
    expect(a.get(Product, 'k3')?.version).toBe(3)
    expect(b.get(Product, 'k4')?.version).toBe(4)
  })

  it('of one opening of a tenant are not those of another', () => {
    const cache = new RowCache(10)
    const first = cache.scope()!
    first.remember(Product, 'k', row(1))
    const reopened = cache.scope()!
    expect(reopened.get(Product, 'k')).toBeUndefined()
    reopened.remember(Product, 'k', row(2))
    expect(first.get(Product, 'k')?.version).toBe(1)
    first.forget(Product, 'k')
    expect(first.get(Product, 'k')).toBeUndefined()
    expect(reopened.get(Product, 'k')?.version).toBe(2)
  })

  it('never hold a row with encrypted properties', () => {
    const scope = new RowCache(10).scope()!
    const Patient = patients.entities.get('Patient')!
    scope.remember(Patient, 'k', row(1))
    expect(scope.get(Patient, 'k')).toBeUndefined()
  })

  it('are none with a bound of 0', () => {
    expect(new RowCache(0).scope()).toBeUndefined()
  })
})
