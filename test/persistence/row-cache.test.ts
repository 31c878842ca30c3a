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
  it('keep at most their bound over all tenants, the rows used lately among them', () => {
    const cache = new RowCache(100)
    const [a, b] = [cache.scope()!, cache.scope()!]
    a.remember(Product, 'hot', row(0))
    for (let i = 1; i <= 1000; i++) {
      ;(i % 2 ? a : b).remember(Product, `k${i}`, row(i))
      expect(a.get(Product, 'hot')?.version).toBe(0) // used all along: never dropped
      expect(cache.size).toBeLessThanOrEqual(100)
    }
    expect(cache.size).toBeGreaterThanOrEqual(50)
    expect(a.get(Product, 'k1')).toBeUndefined() // unused for the longest: gone
    expect(a.get(Product, 'k999')?.version).toBe(999)
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
