// A $batch request body, either form, as the list of requests it holds (OData 4.01 Part 1
// §11.7, JSON Format §19):
//   - JSON (4.01): { "requests": [{ id, method, url, headers, body, atomicityGroup, dependsOn, if }] }
//   - multipart/mixed (4.0): parts of Content-Type application/http (one request each, as
//     HTTP/1.1 text), or multipart/mixed change sets of such parts, each with a Content-ID.
// A change set becomes an atomicity group named by its place, `changeset-1`, `changeset-2`:
// not by its boundary, which sibling change sets may share and which may hold what a JSON
// answer's atomicityGroup may not. Nothing runs here: a batch that cannot be read is refused whole.

import { RequestError } from '../../errors.ts'

export interface BatchPart {
  /** The request's id: JSON's `id`, multipart's Content-ID (or its position when it has none). */
  readonly id: string
  /** The Content-ID a multipart part was sent with, answered with it. */
  readonly contentId?: string
  readonly method: string
  /** As sent: relative to the service root, an absolute path, an absolute URL, or `$<id>/…`. */
  readonly url: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly atomicityGroup?: string
  readonly dependsOn: readonly string[]
  /** JSON's `if`: the condition the client puts on running the request, which the service does not evaluate (batch-handler.ts). */
  readonly condition?: string
}

export interface BatchRequest {
  readonly form: 'json' | 'multipart'
  readonly parts: readonly BatchPart[]
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'MERGE'])

export function parseJsonBatch(body: unknown): BatchRequest {
  const requests = (body as { requests?: unknown } | null)?.requests
  if (!Array.isArray(requests)) throw RequestError.invalid('A JSON $batch body is an object with a "requests" array.', 'requests')
  const parts = requests.map((request, index): BatchPart => {
    const at = `requests/${index}`
    if (!request || typeof request !== 'object') throw RequestError.invalid(`${at} is not a request object.`, at)
    const { id, method, url, headers, body, atomicityGroup, dependsOn, if: condition } = request as Record<string, unknown>
    if (typeof id !== 'string' || !id) throw RequestError.invalid(`${at} needs an "id" (a string).`, `${at}/id`)
    if (typeof method !== 'string' || !METHODS.has(method.toUpperCase())) throw RequestError.invalid(`${at} needs a "method" (GET, POST, PATCH, PUT or DELETE).`, `${at}/method`)
    if (typeof url !== 'string' || !url) throw RequestError.invalid(`${at} needs a "url" (a string).`, `${at}/url`)
    if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) throw RequestError.invalid(`${at}/headers is an object of header names and values.`, `${at}/headers`)
    if (atomicityGroup !== undefined && typeof atomicityGroup !== 'string') throw RequestError.invalid(`${at}/atomicityGroup is a string.`, `${at}/atomicityGroup`)
    if (dependsOn !== undefined && !(Array.isArray(dependsOn) && dependsOn.every((d) => typeof d === 'string'))) throw RequestError.invalid(`${at}/dependsOn is an array of request ids.`, `${at}/dependsOn`)
    if (condition !== undefined && typeof condition !== 'string') throw RequestError.invalid(`${at}/if is a URL expression (a string).`, `${at}/if`)
    const lowered: Record<string, string> = {}
    for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) lowered[name.toLowerCase()] = String(value)
    return { id, method: method.toUpperCase(), url, headers: lowered, body, atomicityGroup: atomicityGroup as string | undefined, dependsOn: (dependsOn as string[] | undefined) ?? [], ...(condition !== undefined ? { condition } : {}) }
  })
  return { form: 'json', parts }
}

/** The boundary of a multipart/mixed Content-Type, or undefined when it is not one. */
export function multipartBoundary(contentType: string): string | undefined {
  if (!/^\s*multipart\/mixed\b/i.test(contentType)) return undefined
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const boundary = match?.[1] ?? match?.[2]
  if (!boundary) throw RequestError.invalid('A multipart/mixed $batch needs a boundary parameter in its Content-Type.', 'Content-Type')
  return boundary
}

export function parseMultipartBatch(text: string, boundary: string): BatchRequest {
  const parts: BatchPart[] = []
  /** Per part, the ordinal of its change set (from 1), or 0 outside any. */
  const changeSets: number[] = []
  let changeSet = 0
  for (const entity of bodyParts(text, boundary)) {
    const boundaryOfSet = multipartBoundary(entity.headers['content-type'] ?? '')
    if (boundaryOfSet) {
      const members = bodyParts(entity.content, boundaryOfSet)
      if (members.length === 0) throw RequestError.invalid(`The change set ${boundaryOfSet} holds no request.`)
      changeSet++
      for (const member of members) {
        parts.push(httpPart(member, parts.length))
        changeSets.push(changeSet)
      }
    } else {
      parts.push(httpPart(entity, parts.length))
      changeSets.push(0)
    }
  }
  const groups = changeSetGroups(changeSet, new Set(parts.map((part) => part.id)))
  return { form: 'multipart', parts: parts.map((part, i) => (changeSets[i] ? { ...part, atomicityGroup: groups[changeSets[i] - 1] } : part)) }
}

/**
 * The atomicity groups of `count` change sets, in order: `changeset-1`, `changeset-2`, …, the
 * same for the same batch. As JSON 4.01 §19.1 asks of an atomicityGroup, each is a request-id
 * (unreserved characters) and no request's id: a Content-ID that is one of them lengthens the
 * prefix (`changeset--1`, …) until none is.
 */
function changeSetGroups(count: number, ids: ReadonlySet<string>): string[] {
  let prefix = 'changeset-'
  const names = () => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`)
  while (names().some((name) => ids.has(name))) prefix += '-'
  return names()
}

interface BodyPart {
  readonly headers: Record<string, string>
  readonly content: string
}

/** The body parts between `--boundary` lines (RFC 2046 §5.1.1), their headers lower-cased. */
function bodyParts(text: string, boundary: string): BodyPart[] {
  const delimiter = `--${boundary}`
  const lines = text.split(/\r?\n/)
  const parts: BodyPart[] = []
  let current: string[] | undefined
  let closed = false
  for (const line of lines) {
    const trimmed = line.trimEnd()
    if (trimmed === delimiter || trimmed === `${delimiter}--`) {
      if (current) parts.push(bodyPart(current))
      current = trimmed === delimiter ? [] : undefined
      if (!current) {
        closed = true
        break
      }
    } else if (current) {
      current.push(line)
    }
  }
  if (!closed) throw RequestError.invalid(`The multipart body does not end with the closing delimiter --${boundary}--.`)
  return parts
}

function bodyPart(lines: string[]): BodyPart {
  const { headers, rest } = headerBlock(lines)
  // The line break before a delimiter belongs to the delimiter (RFC 2046).
  return { headers, content: rest.join('\r\n') }
}

function headerBlock(lines: string[]): { headers: Record<string, string>; rest: string[] } {
  const headers: Record<string, string> = {}
  let index = 0
  for (; index < lines.length && lines[index].trim() !== ''; index++) {
    const colon = lines[index].indexOf(':')
    if (colon <= 0) throw RequestError.invalid(`A $batch part has a malformed header line: '${lines[index].slice(0, 100)}'.`)
    headers[lines[index].slice(0, colon).trim().toLowerCase()] = lines[index].slice(colon + 1).trim()
  }
  return { headers, rest: lines.slice(index + 1) }
}

/** One application/http part: its request line, headers and body. */
function httpPart(part: BodyPart, position: number): BatchPart {
  const type = part.headers['content-type'] ?? ''
  if (!/^application\/http\b/i.test(type)) throw RequestError.invalid(`A $batch part is application/http (or a multipart/mixed change set), not '${type}'.`, 'Content-Type')
  const lines = part.content.split(/\r?\n/)
  let first = 0
  while (first < lines.length && lines[first].trim() === '') first++
  const request = /^(\S+)\s+(\S+)(?:\s+HTTP\/1\.[01])?\s*$/i.exec(lines[first] ?? '')
  if (!request || !METHODS.has(request[1].toUpperCase())) throw RequestError.invalid(`A $batch part starts with a request line (METHOD URL HTTP/1.1), not '${(lines[first] ?? '').slice(0, 100)}'.`)
  const { headers, rest } = headerBlock(lines.slice(first + 1))
  const text = rest.join('\r\n').trim()
  let body: unknown
  const bodyType = headers['content-type']
  if (text && bodyType && !/^application\/json\b/i.test(bodyType)) {
    // Not JSON by its own word: the request is refused as it would be alone (415), not the batch.
    body = text
  } else if (text) {
    try {
      body = JSON.parse(text)
    } catch {
      throw RequestError.invalid(`The body of $batch part ${part.headers['content-id'] ?? position + 1} is not valid JSON.`)
    }
  }
  // A part without a Content-ID is named by its position, in a form no Content-ID can clash with.
  const contentId = part.headers['content-id'] ?? headers['content-id']
  return { id: contentId ?? `#${position + 1}`, contentId, method: request[1].toUpperCase(), url: request[2], headers, body, dependsOn: [] }
}
