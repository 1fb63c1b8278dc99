import { expect } from 'vitest'
import type { TestApp } from './app.js'
import type { Api } from './http.js'

/** POSTs one file as multipart field `file` (or another field name), like a browser form would. */
export function upload(api: Api, filename: string, content: Uint8Array | string, field = 'file') {
  const form = new FormData()
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content
  form.append(field, new Blob([new Uint8Array(bytes)]), filename)
  return api.post('/documents', form)
}

/** Polls the document until it leaves `processing` (the index job runs in the app's worker). */
export async function waitReady(t: TestApp, api: Api, id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const r = await api.get(`/documents/${id}`)
    if (r.status !== 200) throw new Error(`document ${id}: ${r.status} ${r.text}`)
    if (r.body.status !== 'processing') return r.body
    if (Date.now() > deadline) throw new Error(`document ${id} still processing after ${timeoutMs} ms`)
    await new Promise((res) => setTimeout(res, 50))
  }
}

/** Uploads and waits for `ready`; returns the detail. */
export async function uploadReady(t: TestApp, api: Api, filename: string, content: Uint8Array | string) {
  const r = await upload(api, filename, content)
  expect(r.status, r.text).toBe(201)
  const doc = await waitReady(t, api, r.body.id)
  expect(doc.status, JSON.stringify(doc)).toBe('ready')
  return doc
}

export async function chunksOf(t: TestApp, documentId: string) {
  return t.ctx.db
    .selectFrom('chunks')
    .select(['id', 'tenant_id', 'ordinal', 'content', 'section_title', 'heading_path', 'source_url', 'token_count', 'lang', 'embedding_model'])
    .select((eb) => [eb.fn<string>('length', [eb.cast('tsv', 'text')]).as('tsv_len'), eb('embedding', 'is not', null).as('has_embedding')])
    .where('document_id', '=', documentId)
    .orderBy('ordinal')
    .execute()
}
