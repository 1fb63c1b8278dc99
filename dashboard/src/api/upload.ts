import { ApiError, toApiError } from './client'
import type { paths } from './schema'

/** What POST /documents answers with (201), straight from the generated schema. */
export type UploadedDocument = paths['/documents']['post']['responses'][201]['content']['application/json']

/**
 * Uploads one file to POST /documents (multipart field `file`) and reports upload progress.
 *
 * This is the one call that does not go through openapi-fetch: `fetch` has no upload progress events, and
 * the operator wants to see how far a large PDF got. XMLHttpRequest sends the same same-origin session
 * cookie (no token is read by script), and its failures become the same ApiError `call()` produces, so the
 * service's own words (unsupported type 400, parse error 422, 429, 413) reach the screen unchanged.
 */
export function uploadDocument(file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<UploadedDocument> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', '/documents')
    xhr.withCredentials = false // same origin: the cookie is sent anyway
    xhr.responseType = 'text'
    xhr.setRequestHeader('Accept', 'application/json')
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total)
    }
    xhr.onload = () => {
      let body: unknown = null
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null
      } catch {
        body = null
      }
      if (xhr.status === 201 || xhr.status === 200) {
        onProgress(1)
        resolve(body as UploadedDocument)
      } else reject(toApiError(xhr.status, body))
    }
    xhr.onerror = () => reject(new ApiError(0, 'Cannot reach the service. Check your connection and try again.'))
    xhr.onabort = () => reject(new ApiError(0, 'The upload was cancelled.'))
    signal?.addEventListener('abort', () => xhr.abort(), { once: true })
    const form = new FormData()
    form.append('file', file, file.name)
    xhr.send(form)
  })
}
