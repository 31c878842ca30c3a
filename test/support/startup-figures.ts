// Measures `entityctl serve` start-up on N tenants, one instance or several at once: the
// time from spawning to the "entityctl serving" line, for a first and a second start.
//   node test/support/startup-figures.ts <tenants> <instances> [--behind] [serve args…]
// --behind: a plugin file is added after the tenants are made, so every tenant must be
// migrated at the first start (the second start then finds them current).
// Figures go to the README and commit messages; not part of npm test.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createManyTenants } from './many-tenants.ts'
import { serveProcess } from './serve-process.ts'

const [count = '1', instances = '1', ...rest] = process.argv.slice(2)
const behind = rest.includes('--behind')
const args = rest.filter((arg) => arg !== '--behind')
const serverUrl = process.env.TEST_DATABASE_URL!
const dir = mkdtempSync(join(tmpdir(), 'entityctl-figures-'))
const plugins = join(dir, 'plugins')
cpSync(fileURLToPath(new URL('../fixtures/demo-plugins', import.meta.url)), plugins, { recursive: true })
const made = Date.now()
const many = await createManyTenants({ count: Number(count), serverUrl, pluginsDir: plugins, parallel: 8 })
console.log(`created ${count} tenants in ${Date.now() - made} ms`)
if (behind) {
  writeFileSync(join(plugins, 'extra.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ entities: [entity('Shelf', { properties: { Label: p.text() } })] })\n`)
}
try {
  for (const round of ['first start', 'second start']) {
    const started = Date.now()
    const results = await Promise.allSettled(
      Array.from({ length: Number(instances) }, () => serveProcess(many.configPath, {}, args, 600_000).then((s) => ({ s, ms: Date.now() - started }))),
    )
    for (const r of results) {
      if (r.status === 'rejected') console.log(round, `FAILED ${String(r.reason).slice(0, 300)}`)
      else {
        const phases = r.value.s.lines.filter((line) => /versions checked|migration job done/.test(String(line.msg))).map((line) => `${line.msg} ${line.ms} ms`)
        console.log(round, `serving after ${r.value.ms} ms (${phases.join(', ')})`)
      }
    }
    for (const r of results) if (r.status === 'fulfilled') await r.value.s.stop()
  }
} finally {
  await many.remove()
  rmSync(dir, { recursive: true, force: true })
}
