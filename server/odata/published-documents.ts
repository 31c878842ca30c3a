// $metadata and the OpenAPI document check what the model alone does not: a parameter named
// bindingParameter, a method named like an entity type, names that meet under
// EnableLowerCamelCase. serve prints both at its start and doctor when it checks the plugins,
// so such a plugin stops the start (and fails the check) naming its file and line, rather than
// answering 500 to every request for the documents.

import { PluginError, withDeclarationPosition } from '../model/plugin-error.ts'
import { metadataDocument, type MetadataSource } from './metadata/metadata-document.ts'
import { openApiDocument } from './openapi/openapi-document.ts'

/** Prints both documents (they are kept for the requests); a plugin's mistake as a PluginError with its position. */
export function printPublishedDocuments(source: MetadataSource): void {
  try {
    metadataDocument(source, 'xml')
    openApiDocument(source)
  } catch (error) {
    throw error instanceof PluginError ? withDeclarationPosition(error) : error
  }
}
