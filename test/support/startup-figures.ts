// Measures `entityctl serve` start-up on N tenants, one instance or two at once.
// node test/support/startup-figures.ts <tenants> <instances> [extra serve args]
import { createManyTenants } from './many-tenants.ts'
import { serveProcess } from './serve-process.ts'
import { fileURLToPath } from 'node:url'

const [count = '1', instances = '1', ...args] = process.argv.slice(2)
const serverUrl = process.env.TEST_DATABASE_URL!
const made = Date.now()
const many = await createManyTenants({ count: Number(count), serverUrl, pluginsDir: fileURLToPath(new URL('../fixtures/demo-plugins', import.meta.url)), parallel: 8 })
console.log(`created ${count} tenants in ${Date.now() - made} ms`)
try {
  for (const round of ['first start', 'second start']) {
    const started = Date.now()
    const results = await Promise.allSettled(Array.from({ length: Number(instances) }, () => serveProcess(many.configPath, {}, args).then((s) => ({ s, ms: Date.now() - started }))))
    for (const r of results) console.log(round, r.status === 'fulfilled' ? `serving after ${r.value.ms} ms` : `FAILED ${String(r.reason).slice(0, 300)}`)
    for (const r of results) if (r.status === 'fulfilled') await r.value.s.stop()
  }
} finally {
  await many.remove()
}
