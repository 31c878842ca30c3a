// Content negotiation of an OData answer (OData 4.01 Protocol 8.2.1, JSON Format 3): from the
// Accept header and $format, which representation the client gets, or 406 when the service
// cannot produce any it accepts.
//
//   Accept: application/json;odata.metadata=full;IEEE754Compatible=true
//     →  { media: 'json', metadata: 'full', ieee754: true }
//   Accept: application/atom+xml                                  →  406 NotAcceptable
//   $format=application/json;odata.metadata=none                   →  { metadata: 'none' }
//
// $format wins over Accept. Most requests send no Accept or a plain one; those take the
// default without parsing anything.

import { ServiceError } from '../../errors.ts'

export type MetadataLevel = 'none' | 'minimal' | 'full'

/** The JSON representation an answer is written in. */
export interface JsonFormat {
  readonly metadata: MetadataLevel
  /** Edm.Decimal and Edm.Int64 values (counts included) written as strings. */
  readonly ieee754: boolean
}

export const DEFAULT_FORMAT: JsonFormat = Object.freeze({ metadata: 'minimal', ieee754: false })

/** What a resource can be written as: JSON, XML ($metadata), plain text ($count, $value). */
export type Media = 'json' | 'xml' | 'text'

const MEDIA_TYPES: Readonly<Record<Media, readonly string[]>> = {
  json: ['application/json'],
  xml: ['application/xml', 'text/xml'],
  text: ['text/plain'],
}

/** $format short names. */
const SHORT_FORMATS: Readonly<Record<string, string>> = { json: 'application/json', xml: 'application/xml' }

interface MediaRange {
  readonly type: string
  readonly params: ReadonlyMap<string, string>
  readonly q: number
}

/**
 * The representation of the answer among `offered` (in the service's order of preference):
 * the first one the client accepts, with the JSON parameters it asked for. 406 when none.
 */
export function negotiate(accept: string, format: string | undefined, offered: readonly Media[]): { media: Media; json: JsonFormat } {
  if (format === undefined && (accept === '' || accept === '*/*')) return { media: offered[0], json: DEFAULT_FORMAT }
  if (format === undefined && accept === 'application/json' && offered.includes('json')) return { media: 'json', json: DEFAULT_FORMAT }
  const ranges = format !== undefined ? [formatRange(format)] : parseAccept(accept)
  let best: { media: Media; range: MediaRange } | undefined
  for (const range of ranges) {
    if (range.q <= 0) continue
    const media = offered.find((candidate) => matches(range.type, candidate))
    if (media && (!best || range.q > best.range.q)) best = { media, range }
  }
  if (!best) throw notAcceptable(format !== undefined ? `$format=${format}` : `Accept: ${accept}`, offered)
  return { media: best.media, json: jsonFormat(best.range.params) }
}

/** The Content-Type of a JSON answer in `format`. */
export function jsonContentType(format: JsonFormat): string {
  return `application/json; odata.metadata=${format.metadata}; odata.streaming=true${format.ieee754 ? '; IEEE754Compatible=true' : ''}`
}

/**
 * The value of $format in a query string, decoded, or undefined: read off the raw text, so
 * a request that the read plans answer without parsing its options is not parsed for it.
 */
export function formatOption(querystring: string): string | undefined {
  if (!FORMAT_OPTION.test(querystring)) return undefined
  for (const option of querystring.split('&')) {
    const equals = option.indexOf('=')
    if (equals < 0) continue
    let name: string
    try {
      name = decodeURIComponent(option.slice(0, equals)).toLowerCase()
    } catch {
      continue
    }
    if (name !== '$format' && name !== 'format') continue
    try {
      return decodeURIComponent(option.slice(equals + 1))
    } catch {
      return undefined // the query parser reports the bad encoding
    }
  }
  return undefined
}

const FORMAT_OPTION = /(?:^|&)(?:\$|%24)?format=/i

/** `json;odata.metadata=none` → application/json with its parameters. */
function formatRange(format: string): MediaRange {
  const semicolon = format.indexOf(';')
  const head = (semicolon < 0 ? format : format.slice(0, semicolon)).trim().toLowerCase()
  return mediaRange(`${SHORT_FORMATS[head] ?? head}${semicolon < 0 ? '' : format.slice(semicolon)}`)
}

function jsonFormat(params: ReadonlyMap<string, string>): JsonFormat {
  const metadata = (params.get('odata.metadata') ?? params.get('metadata') ?? 'minimal').toLowerCase()
  if (metadata !== 'none' && metadata !== 'minimal' && metadata !== 'full') {
    throw new ServiceError('NotAcceptable', `odata.metadata=${metadata} is not a metadata level; use none, minimal or full.`)
  }
  const ieee754 = (params.get('ieee754compatible') ?? 'false').toLowerCase() === 'true'
  if (metadata === 'minimal' && !ieee754) return DEFAULT_FORMAT
  return { metadata, ieee754 }
}

function matches(range: string, media: Media): boolean {
  if (range === '*/*') return true
  if (range.endsWith('/*')) return MEDIA_TYPES[media].some((type) => type.startsWith(range.slice(0, -1)))
  return MEDIA_TYPES[media].includes(range)
}

function parseAccept(accept: string): MediaRange[] {
  // An Accept header of only blanks and commas accepts anything, as no header does.
  const ranges = accept.split(',').map((part) => part.trim()).filter(Boolean).map(mediaRange)
  return ranges.length ? ranges : [mediaRange('*/*')]
}

/** `application/json;odata.metadata=full;q=0.9` → type, lower-cased parameters, quality. */
function mediaRange(text: string): MediaRange {
  const [type, ...rest] = text.split(';')
  const params = new Map<string, string>()
  let q = 1
  for (const param of rest) {
    const equals = param.indexOf('=')
    if (equals < 0) continue
    const name = param.slice(0, equals).trim().toLowerCase()
    const value = param.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1')
    if (name === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0
    else params.set(name, value)
  }
  return { type: type.trim().toLowerCase(), params, q }
}

/** The two forms of a $batch, its request's and its answer's. */
export type BatchForm = 'json' | 'multipart'

const BATCH_MEDIA_TYPES: Readonly<Record<BatchForm, string>> = { json: 'application/json', multipart: 'multipart/mixed' }

/**
 * The form of a $batch answer (Protocol 4.01 §11.7.1: Accept names "the desired batch response
 * format, either multipart/mixed or application/json. If no Accept header is provided, services
 * SHOULD respond with the content type of the request"). Each form takes the quality of the most
 * specific range that matches it (RFC 9110 §12.5.1: `application/json;q=0` beside a wildcard
 * refuses JSON); the better one wins, the request's own form on a tie. $format, when given,
 * decides instead of Accept, as on every other resource (negotiate). 406 when neither is
 * acceptable, before any request of the batch runs.
 *   Accept: application/json, on a multipart batch          →  json
 *   Accept: multipart/mixed;q=0.5, application/json         →  json
 *   Accept: application/json, multipart/mixed               →  the request's form
 *   no Accept, or a wildcard                                →  the request's form
 *   $format=json (or application/json), whatever Accept says →  json
 *   $format=xml                                             →  406
 */
export function negotiateBatch(accept: string, requestForm: BatchForm, format?: string): BatchForm {
  if (format === undefined && (accept === '' || accept === '*/*')) return requestForm
  const ranges = format !== undefined ? [formatRange(format)] : parseAccept(accept)
  const quality = (form: BatchForm): number => {
    const type = BATCH_MEDIA_TYPES[form]
    const matching = ranges.filter((range) => range.type === type || range.type === `${type.split('/')[0]}/*` || range.type === '*/*')
    const specificity = (range: MediaRange) => (range.type === '*/*' ? 0 : range.type.endsWith('/*') ? 1 : 2)
    const best = matching.sort((a, b) => specificity(b) - specificity(a) || b.q - a.q)[0]
    return best?.q ?? 0
  }
  const other: BatchForm = requestForm === 'json' ? 'multipart' : 'json'
  const [own, others] = [quality(requestForm), quality(other)]
  if (own <= 0 && others <= 0) {
    const asked = format !== undefined ? `$format=${format}` : `Accept: ${accept}`
    throw new ServiceError('NotAcceptable', `A $batch is answered as multipart/mixed or application/json; the request asks for ${asked.length > 200 ? `${asked.slice(0, 200)}…` : asked}.`)
  }
  return others > own ? other : requestForm
}

function notAcceptable(asked: string, offered: readonly Media[]): ServiceError {
  const types = offered.map((media) => MEDIA_TYPES[media][0]).join(' or ')
  return new ServiceError('NotAcceptable', `This resource is available as ${types}; the request asks for ${asked.length > 200 ? `${asked.slice(0, 200)}…` : asked}.`)
}

/**
 * `Prefer: odata.maxpagesize=N` (Protocol 8.2.8.3; 4.01 names it `maxpagesize` too): the page
 * size the client wants of server-driven paging, at most `maxTop`, and the preference's name as
 * the client wrote it, for Preference-Applied; undefined when it states none.
 */
export function preferredPageSize(prefer: string, maxTop: number): { readonly size: number; readonly name: string } | undefined {
  if (!prefer || !/maxpagesize/i.test(prefer)) return undefined
  let found: { readonly size: number; readonly name: string } | undefined
  for (const preference of prefer.split(',')) {
    const match = /^\s*((?:odata\.)?maxpagesize)\s*=\s*"?(\d{1,15})"?\s*$/i.exec(preference)
    if (!match || Number(match[2]) === 0) continue
    const unprefixed = !match[1].includes('.')
    // Given both ways, the unprefixed one counts (Protocol 4.01 §8.2.8.3).
    if (!found || (unprefixed && found.name.includes('.'))) found = { size: Math.min(Number(match[2]), maxTop), name: match[1] }
  }
  return found
}
