/**
 * The pure functions of ingestion other modules use: chunking (the retrieval evaluation indexes its corpora
 * through it), the token estimate, and the text-search configuration per text (retrieval must query with
 * the same logic the index was built with).
 */
export { chunkDocument, chunkMarkdown, documentLanguage, estimateTokens, DEFAULT_CHUNK_OPTIONS, type Chunk, type ChunkOptions } from './chunking.fns.js'
export { regconfigFor, isRegconfig, REGCONFIGS, type Regconfig } from './language.fns.js'

/** A document's outbound event (`document.ready` / `document.failed`); documents belong to the workspace, not a bot. */
export function documentEvent(
  type: 'document.ready' | 'document.failed',
  d: { id: string; filename: string; title: string | null; source_url: string | null },
  extra: { chunk_count?: number; error?: string },
) {
  return { type, botId: null, data: { document_id: d.id, title: d.title ?? d.filename, filename: d.filename, source_url: d.source_url, ...extra } }
}
