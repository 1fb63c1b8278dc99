/**
 * The pure functions of ingestion other modules use: chunking (the retrieval evaluation indexes its corpora
 * through it), the token estimate, and the text-search configuration per text (retrieval must query with
 * the same logic the index was built with).
 */
export { chunkDocument, chunkMarkdown, documentLanguage, estimateTokens, DEFAULT_CHUNK_OPTIONS, type Chunk, type ChunkOptions } from './chunking.fns.js'
export { regconfigFor, isRegconfig, REGCONFIGS, type Regconfig } from './language.fns.js'
