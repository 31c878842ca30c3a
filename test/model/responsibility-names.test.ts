// A responsibility's name is declared by a plugin and becomes a row of every tenant's
// Responsibility table, listed by the CLI and granted by name: the loader refuses one that
// table would refuse or the CLI could not name (empty or blank, control characters, more than
// 100 characters), naming the plugin, rather than letting `responsibility sync` fail on it at
// every start.

import { describe, expect, it } from 'vitest'
import { entity, p, plugin } from '../../server/plugin.ts'
import { buildModel } from '../../server/model/build-model.ts'
import { PluginError } from '../../server/model/plugin-error.ts'

const Note = entity('Note', { properties: { Text: p.text() } })
const build = (name: string) => () =>
  buildModel([{ source: 'plugins/notes.ts', decl: plugin({ entities: [Note], responsibilities: { [name]: { Note: ['read'] } } }) }])

describe('declared responsibility names', () => {
  it.each(['Read\nNotes', 'Read\tNotes', 'Nul\u0000', 'Red\u001b[31mNotes', 'Del\u007f'])('refuses %j, naming the plugin', (name) => {
    expect(build(name)).toThrow(PluginError)
    expect(build(name)).toThrow(`responsibility ${JSON.stringify(name)}: a responsibility name may not contain control characters (line breaks, tabs, escapes)`)
  })

  it.each(['', ' ', '   ', '\u00a0\u2003'])('refuses the empty or blank name %j, naming the plugin', (name) => {
    expect(build(name)).toThrow(PluginError)
    expect(build(name)).toThrow(`plugins/notes.ts: responsibility ${JSON.stringify(name)}: a responsibility name may not be empty or blank`)
  })

  it.each([' ReadNotes', 'ReadNotes ', '  Read notes  ', '\u00a0ReadNotes'])('refuses %j, with spaces around it that `role grant` would trim, naming the plugin', (name) => {
    expect(build(name)).toThrow(PluginError)
    expect(build(name)).toThrow(`plugins/notes.ts: responsibility ${JSON.stringify(name)}: a responsibility name may not begin or end with a space (\`role grant\` trims what it is given)`)
  })

  it('refuses a name longer than 100 characters', () => {
    expect(build('R'.repeat(101))).toThrow('a responsibility name may have at most 100 characters')
    expect(build('R'.repeat(100))).not.toThrow()
  })

  it('takes a name of letters, digits, spaces and punctuation in any script', () => {
    expect(build('Read notes: Zürich / 東京')).not.toThrow()
  })
})
