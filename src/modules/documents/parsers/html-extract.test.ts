import { describe, expect, it } from 'vitest'
import { extractHtml, extractText } from './html-extract.js'

const para = (s: string) => `<p>${`${s} `.repeat(30)}</p>`

describe('extractHtml', () => {
  const html = `<!doctype html><html><head><title>Install guide</title><base href="/docs/"></head><body>
    <nav><a href="pricing">Pricing</a> <a href="/about#team">About</a> <a href="mailto:x@y.z">Mail</a> <a href="javascript:void 0">JS</a></nav>
    <main><article><h1>Install guide</h1>${para('The installer sets everything up for you.')}
      <h2>Requirements</h2><ul><li>Node 20</li><li>PostgreSQL <b>15</b></li></ul>
      <ol start="3"><li>third</li><li>fourth</li></ol>
      <pre><code class="language-bash">npm install thing
npm start</code></pre>
      <table><thead><tr><th>Flag</th><th>Meaning</th></tr></thead><tbody><tr><td>-v</td><td>verbose | loud</td></tr></tbody></table>
      ${para('See the configuration page for all the options.')}<script>var x = 1</script>
    </article></main><footer>© 2024 <a href="https://other.example/">elsewhere</a></footer></body></html>`

  it('keeps the main content as Markdown with headings, lists, code and tables, under the page title', () => {
    const page = extractHtml(html, 'https://e.com/docs/install')
    expect(page.title).toBe('Install guide')
    expect(page.markdown.startsWith('# Install guide\n\n')).toBe(true)
    expect(page.markdown.match(/Install guide/g)?.length).toBe(1)
    expect(page.markdown).toContain('## Requirements')
    expect(page.markdown).toContain('- Node 20\n- PostgreSQL **15**')
    expect(page.markdown).toContain('3. third\n4. fourth')
    expect(page.markdown).toContain('```bash\nnpm install thing\nnpm start\n```')
    expect(page.markdown).toContain('| Flag | Meaning |\n| --- | --- |\n| -v | verbose \\| loud |')
    expect(page.markdown).not.toContain('var x')
    expect(page.markdown).not.toContain('Pricing')
  })

  it('collects absolute links against <base>, without mailto/javascript', () => {
    const page = extractHtml(html, 'https://e.com/docs/install')
    expect(page.links).toEqual(['https://e.com/docs/pricing', 'https://e.com/about#team', 'https://other.example/'])
  })

  it('honours meta robots', () => {
    const page = extractHtml(
      '<html><head><meta name="ROBOTS" content="noindex, nofollow"></head><body><a href="/x">x</a><p>hi</p></body></html>',
      'https://e.com/',
    )
    expect(page.noindex).toBe(true)
    expect(page.nofollow).toBe(true)
    expect(page.links).toEqual([])
  })

  it('falls back to the body text for short pages', () => {
    const page = extractHtml('<html><head><title>Tiny</title></head><body><nav>menu</nav><p>Just a line.</p></body></html>', 'https://e.com/')
    expect(page.markdown).toBe('# Tiny\n\nJust a line.')
  })
})

describe('extractText', () => {
  it('keeps markdown and takes its first heading as title', () => {
    expect(extractText('intro\r\n# Hello\r\ntext', 'text/markdown')).toEqual({ title: 'Hello', markdown: 'intro\n# Hello\ntext' })
    expect(extractText('plain', 'text/plain')).toEqual({ title: null, markdown: 'plain' })
  })
})
