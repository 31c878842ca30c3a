// No import cycle spans two folders of server/ (issue #16): a subsystem that imports another
// which imports it back has no top and no bottom. The composition root (server/start.ts)
// sits on top; each folder below it is one subsystem. Type-only imports count, as they do
// for `npx madge --circular --extensions ts server`: they couple the folders all the same.
// Cycles inside one folder are allowed (a router and its handlers).

import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SERVER = fileURLToPath(new URL('../server', import.meta.url))
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/** server/ as a graph: each .ts file (relative to server/) and the server files it imports. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SERVER, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(join(SERVER, file), 'utf8')
    const targets = new Set<string>()
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]
      const path = specifier.startsWith('.') ? resolve(SERVER, dirname(file), specifier) : specifier.startsWith('#server/') ? join(SERVER, specifier.slice('#server/'.length)) : undefined
      if (path?.endsWith('.ts')) targets.add(relative(SERVER, path))
    }
    graph.set(file, [...targets].filter((target) => files.includes(target)))
  }
  return graph
}

/** The strongly connected components of more than one file (Tarjan): every import cycle lies in one. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

function folders(component: readonly string[]): Set<string> {
  return new Set(component.map((file) => dirname(file)))
}

describe('imports of server/', () => {
  it('finds a cycle across folders in a graph that has one, and none within a folder', () => {
    const graph = new Map([
      ['http/app.ts', ['odata/routes.ts']],
      ['odata/routes.ts', ['odata/handler.ts']],
      ['odata/handler.ts', ['odata/routes.ts', 'services.ts']],
      ['services.ts', ['http/app.ts']],
      ['auth/a.ts', ['auth/b.ts']],
      ['auth/b.ts', ['auth/a.ts']],
    ])
    const found = cycles(graph)
    expect(found).toEqual([['http/app.ts', 'odata/handler.ts', 'odata/routes.ts', 'services.ts'], ['auth/a.ts', 'auth/b.ts']])
    expect(found.map((component) => folders(component).size)).toEqual([3, 1])
  })

  it('has no import cycle that spans two folders', () => {
    const graph = importGraph()
    expect(graph.get('start.ts')).toContain('http/app.ts')
    const across = cycles(graph).filter((component) => folders(component).size > 1)
    expect(across, across.map((component) => component.join(' ⇄ ')).join('\n')).toEqual([])
  })

  it('has nothing that imports the composition root', () => {
    const importers = [...importGraph()].filter(([, targets]) => targets.includes('start.ts')).map(([file]) => file)
    expect(importers).toEqual([])
  })
})
