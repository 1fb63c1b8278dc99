import { describe, expect, it } from 'vitest'
import { parseUpload } from '../src/modules/documents/parsers/parse.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { upload, waitReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'

/** Issue 52, item 12: an exported help centre's `.html` pages upload as documents, read as the crawler reads a page. */
const PAGE = `<!doctype html><html><head><title>Refund policy | Acme Help</title>
<link rel="canonical" href="https://help.acme.test/articles/refunds"><style>.x{}</style><script>track()</script></head>
<body><nav><a href="/">Home</a></nav><main><article><h1>Refund policy</h1>
<p>Refunds are processed within 5 business days after we receive the returned item.</p>
<h2>Exceptions</h2><p>Gift cards cannot be refunded. Sale items can be returned within 14 days.</p>
</article></main><footer>© Acme</footer></body></html>`

describe('.html uploads', () => {
  it('the parser reads the main content as Markdown, with its title and canonical address', async () => {
    const r = await parseUpload('refunds.html', new TextEncoder().encode(PAGE))
    expect(r.fileType).toBe('markdown')
    expect(r.title).toContain('Refund policy')
    expect(r.text).toContain('Refunds are processed within 5 business days')
    expect(r.text).toMatch(/^## Exceptions$/m)
    expect(r.text).not.toContain('track()')
    expect(r.url).toBe('https://help.acme.test/articles/refunds')
    expect((await parseUpload('page.htm', new TextEncoder().encode(PAGE))).text).toContain('Gift cards')
  })

  describe('over HTTP', () => {
    let t: TestApp
    appWithFakeLlm({}, (started) => (t = started.t))
    it('POST /documents takes an .html file and makes it a ready document', async () => {
      const owner = await createTenant(t)
      const r = await upload(owner.api, 'refunds.html', PAGE)
      expect(r.status, r.text).toBe(201)
      await waitReady(t, owner.api, r.body.id, 60_000)
      const doc = await owner.api.get(`/documents/${r.body.id}`)
      expect(doc.body).toMatchObject({ status: 'ready', filename: 'refunds.html' })
      expect(doc.body.parsed_text).toContain('Gift cards cannot be refunded')
    })
  })
})
