// The log on a terminal (server/http/pretty-log.ts): each JSON line becomes one readable line.

import { EventEmitter } from 'node:events'
import { expect, it } from 'vitest'
import { LogLines } from '../../server/http/log-lines.ts'
import { prettyLine } from '../../server/http/pretty-log.ts'

const TIME = Date.UTC(2026, 0, 2, 12, 4, 5, 123)

it('writes the time, the level, the message and the other fields, one line per entry', () => {
  const line = JSON.stringify({ level: 30, time: TIME, pid: 1, hostname: 'h', msg: 'request', method: 'GET', url: '/api/Orders?$top=1', status: 200, tenant: 'demo shop' })
  expect(prettyLine(`${line}\n`, false)).toBe('12:04:05.123 INFO  request method=GET url=/api/Orders?$top=1 status=200 tenant="demo shop"\n')
  expect(prettyLine(`${line}\n`)).toContain('\u001b[32mINFO \u001b[0m')
})

it('puts an error stack on indented lines of its own, and leaves a line that is not JSON as it is', () => {
  const line = JSON.stringify({ level: 50, time: TIME, msg: 'shutdown failed', err: { type: 'Error', message: 'x', stack: 'Error: x\n    at f (a.ts:1:2)' } })
  expect(prettyLine(line, false)).toBe('12:04:05.123 ERROR shutdown failed err=\n    Error: x\n        at f (a.ts:1:2)\n')
  expect(prettyLine('not json\n', false)).toBe('not json\n')
})

it('is applied by LogLines to every line when given, after bounding it', () => {
  const written: string[] = []
  const destination = Object.assign(new EventEmitter(), { write: (text: string) => written.push(text), flush: (done?: () => void) => done?.(), flushSync: () => {} })
  const lines = new LogLines(destination as never, 1, (line) => prettyLine(line, false))
  lines.write(`${JSON.stringify({ level: 40, time: TIME, msg: 'slow' })}\n`)
  expect(written).toEqual(['12:04:05.123 WARN  slow\n'])
})

it('escapes control characters of a value (a user name stored before they were refused) rather than send them to the terminal', () => {
  const line = JSON.stringify({ level: 30, time: TIME, msg: 'request', user: 'Red\u001b[31m', tenant: 'a\u0007b', pat: 'c\u009b1m' })
  expect(prettyLine(line, false)).toBe('12:04:05.123 INFO  request user="Red\\u001b[31m" tenant="a\\u0007b" pat="c\\u009b1m"\n')
})
