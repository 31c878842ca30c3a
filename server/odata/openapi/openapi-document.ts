// GET /api/openapi.json and `entityctl openapi`: the OpenAPI document as a string body. The
// model and the casing never change while a server runs, so it is printed once and kept.

import { readFileSync } from 'node:fs'
import type { Model } from '../../model/model.ts'
import { buildCsdl } from '../metadata/build-csdl.ts'
import type { MetadataSource } from '../metadata/metadata-document.ts'
import { buildOpenApi } from './build-openapi.ts'

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }

const printed = new WeakMap<Model, Map<string, string>>()

export function openApiDocument(source: MetadataSource): string {
  const maxExpansionDepth = source.config.ApiOptions.MaxExpansionDepth
  const key = `${source.naming.lowerCamelCase} ${maxExpansionDepth}`
  let documents = printed.get(source.model)
  if (!documents) printed.set(source.model, (documents = new Map()))
  let document = documents.get(key)
  if (document === undefined) {
    const csdl = buildCsdl(source.model, source.naming, { maxExpansionDepth })
    document = JSON.stringify(buildOpenApi(csdl, { version }), null, 2)
    documents.set(key, document)
  }
  return document
}
