#!/usr/bin/env node
// The workload's dataset at a scale factor: `node scaled-dataset.mjs <gen-dataset.mjs> <scale> <outDir>`.
// gen-dataset.mjs (the shared generator, copied unchanged) has fixed sizes; this runs the same
// algorithm with every size multiplied (products, customers and orders: scale 10 is 20,000
// products, 100,000 customers, 1,000,000 orders and about 4,000,000 lines), and writes the
// same files: CSVs, expected.json (results and their row-count summary, which the runner
// checks instead of workload.json's fixed counts) and stats.json last. The first rows of each
// stream are those of scale 1, so the fixed customer and products of the writes are the same.
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [generatorPath, scaleText, outDir] = process.argv.slice(2)
const scale = Number(scaleText)
if (!generatorPath || !outDir || !Number.isInteger(scale) || scale < 1) {
  console.error('usage: node scaled-dataset.mjs <gen-dataset.mjs> <scale: a whole number >= 1> <outDir>')
  process.exit(2)
}
const generator = await import(pathToFileURL(resolve(generatorPath)).href)
for (const key of Object.keys(generator.SIZES)) generator.SIZES[key] *= scale
const started = Date.now()
const data = generator.generate()
await generator.writeCsvs(data, outDir)
const results = generator.expectedResults(data)
writeFileSync(join(outDir, 'expected.json'), JSON.stringify({ summary: generator.summarize(results), results }, null, 1))
const stats = { scale, products: data.products.length, customers: data.customers.length, orders: data.orders.length, lines: data.lines.length }
writeFileSync(join(outDir, 'stats.json'), JSON.stringify(stats, null, 1))
console.log(JSON.stringify({ outDir, ms: Date.now() - started, stats }))
