// GET /api/$metadata: the service's CSDL document, XML or JSON ($format=json). The model and
// the casing never change while a server runs, so each variant is printed once and kept, with
// its ETag: a hash of its text, so it changes with the model, the format and the version.
//
// The edmx Version should be the response's OData-Version (4.0 unless the client asked for
// 4.01, decisions.md "Versioning"): the content is the same, but some generators (SAP Cloud
// SDK) read any Version other than exactly "4.0" as OData V2.

import { createHash } from 'node:crypto'
import type { Model } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { buildCsdl } from './build-csdl.ts'
import type { CsdlVersion } from './csdl.ts'
import { writeCsdlJson } from './write-csdl-json.ts'
import { writeCsdlXml } from './write-csdl-xml.ts'

export type MetadataFormat = 'xml' | 'json'

/** What the document depends on: the parts of Services it reads. */
export interface MetadataSource {
  readonly model: Model
  readonly naming: NamingPolicy
  readonly config: { readonly ApiOptions: { readonly MaxExpansionDepth: number } }
}

export interface PrintedDocument {
  readonly text: string
  /** Strong: the same bytes for the same tag. */
  readonly etag: string
}

const printed = new WeakMap<Model, Map<string, PrintedDocument>>()

/** The document as the response body: application/xml or application/json, UTF-8. */
export function metadataDocument(source: MetadataSource, format: MetadataFormat, version: CsdlVersion = '4.01'): string {
  return printedDocument(source, format, version).text
}

/** The document with its ETag, printed once per variant. */
export function printedDocument(source: MetadataSource, format: MetadataFormat, version: CsdlVersion = '4.01'): PrintedDocument {
  const maxExpansionDepth = source.config.ApiOptions.MaxExpansionDepth
  const key = `${format} ${version} ${source.naming.lowerCamelCase} ${maxExpansionDepth}`
  let documents = printed.get(source.model)
  if (!documents) printed.set(source.model, (documents = new Map()))
  let document = documents.get(key)
  if (document === undefined) {
    const csdl = buildCsdl(source.model, source.naming, { version, maxExpansionDepth })
    const text = format === 'xml' ? writeCsdlXml(csdl) : JSON.stringify(writeCsdlJson(csdl))
    document = { text, etag: `"${createHash('sha256').update(text).digest('base64url')}"` }
    documents.set(key, document)
  }
  return document
}
