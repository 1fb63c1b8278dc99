import { parseHTML } from 'linkedom'
import { describe, expect, it } from 'vitest'
import { labelsFor, resolveLocale, SUPPORTED_LOCALES, UI_KEYS, LINK_SAFETY_KEYS } from '../src/modules/widget/widget.i18n.js'
import { checkMessage, originAllowed, widgetBundleUrl } from '../src/modules/widget/widget.fns.js'
import { FALLBACK_LABELS, fill } from '../widget/src/labels.js'
import { parseMarkdown, renderMarkdown, safeUrl } from '../widget/src/markdown.js'
import { SseParser } from '../widget/src/sse.js'

/** Renders markdown into a detached DOM and returns the container. */
function render(md: string) {
  const { document } = parseHTML('<!doctype html><html><body><div id="c"></div></body></html>')
  const c = document.getElementById('c')!
  c.appendChild(renderMarkdown(md, document as unknown as Document))
  return c
}

describe('safe markdown', () => {
  const hostile = [
    '<img src=x onerror="alert(1)">',
    '<script>alert(1)</script>',
    '<iframe src="https://evil.example"></iframe>',
    '[click](javascript:alert(1))',
    '[click](JaVaScRiPt:alert(1))',
    '[click](java\tscript:alert(1))',
    '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[click](vbscript:msgbox)',
    '<a href="javascript:alert(1)">x</a>',
    '<svg onload=alert(1)>',
    '**<b onmouseover=alert(1)>bold</b>**',
    '[x](https://ok.example/" onclick="alert(1))',
    '`<img src=x onerror=alert(1)>`',
    '```\n<script>alert(1)</script>\n```',
  ]

  it.each(hostile)('renders %s without any executable element, handler or script URL', (md) => {
    const c = render(md)
    expect(c.querySelectorAll('img, script, iframe, svg, object, embed, b, style').length).toBe(0)
    for (const el of Array.from(c.querySelectorAll('*'))) {
      for (const attr of Array.from(el.attributes)) {
        expect(attr.name.startsWith('on')).toBe(false)
        if (attr.name === 'href') expect(attr.value).toMatch(/^(https?:|mailto:|tel:)/)
      }
    }
    // The hostile text is still visible to the visitor as text, not silently dropped.
    expect(c.textContent!.length).toBeGreaterThan(0)
  })

  it('shows raw HTML as literal text', () => {
    const c = render('Hello <img src=x onerror=alert(1)> world')
    expect(c.textContent).toBe('Hello <img src=x onerror=alert(1)> world')
  })

  it('renders the supported constructs as elements', () => {
    const c = render(
      [
        '## Setup',
        'Use **bold**, *italic*, ~~old~~ and `code` with a [link](https://docs.example.com/a?b=1).',
        '',
        '- first',
        '- second',
        '',
        '3. three',
        '4. four',
        '',
        '> quoted',
        '',
        '```js',
        'let a = 1 < 2',
        '```',
        'See https://example.com/page. Or mail mailto:help@example.com',
        'snake_case_name stays',
      ].join('\n'),
    )
    expect(c.querySelector('h3')!.textContent).toBe('Setup')
    expect(c.querySelector('strong')!.textContent).toBe('bold')
    expect(c.querySelector('em')!.textContent).toBe('italic')
    expect(c.querySelector('del')!.textContent).toBe('old')
    expect(c.querySelector('p code')!.textContent).toBe('code')
    const links = Array.from(c.querySelectorAll('a'))
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://docs.example.com/a?b=1', 'https://example.com/page', 'mailto:help@example.com'])
    for (const a of links) {
      expect(a.getAttribute('target')).toBe('_blank')
      expect(a.getAttribute('rel')).toContain('noopener')
    }
    expect(Array.from(c.querySelectorAll('ul li')).map((li) => li.textContent)).toEqual(['first', 'second'])
    expect(c.querySelector('ol')!.getAttribute('start')).toBe('3')
    expect(c.querySelector('blockquote')!.textContent).toBe('quoted')
    expect(c.querySelector('pre code')!.textContent).toBe('let a = 1 < 2')
    expect(c.textContent).toContain('snake_case_name stays')
  })

  it('renders a half-streamed answer (open fence, unclosed bold) without losing text', () => {
    const c = render('Try **this\n```\nnpm i')
    expect(c.textContent).toContain('**this')
    expect(c.querySelector('pre')!.textContent).toBe('npm i')
  })

  it('keeps only absolute http(s), mailto and tel addresses', () => {
    expect(safeUrl('https://a.example/x')).toBe('https://a.example/x')
    expect(safeUrl('tel:+123')).toBe('tel:+123')
    for (const bad of ['javascript:alert(1)', ' javascript:alert(1)', 'java\nscript:x', 'data:text/html,x', '/relative', 'file:///etc/passwd', '']) {
      expect(safeUrl(bad)).toBeNull()
    }
    expect(parseMarkdown('[x](/relative)')).toEqual([{ t: 'p', c: [{ t: 'text', v: 'x' }] }])
  })
})

describe('SSE parser (browser side)', () => {
  it('yields frames split across reads, skips heartbeats and junk', () => {
    const p = new SseParser()
    expect(p.push('data: {"type":"status","stage":"thinking"}\n\n: ping\n\ndata: {"type":"ch')).toEqual([{ type: 'status', stage: 'thinking' }])
    expect(p.push('unk","text":"Hel"}\r\n\r\ndata: not json\n\n')).toEqual([{ type: 'chunk', text: 'Hel' }])
    expect(p.push('data: {"type":"done"}\n')).toEqual([])
    expect(p.push('\n')).toEqual([{ type: 'done' }])
  })
})

describe('widget labels', () => {
  it('ships every label in the eight languages of the catalogue, and the bundle fallback equals English', () => {
    expect([...SUPPORTED_LOCALES].sort()).toEqual(['de', 'en', 'es', 'fr', 'it', 'nl', 'pt', 'ru'])
    for (const l of SUPPORTED_LOCALES) {
      const set = labelsFor(l)
      for (const k of UI_KEYS) expect(set.ui[k], `${l}.${k}`).toBeTruthy()
      for (const k of LINK_SAFETY_KEYS) expect(set.link[k], `${l}.${k}`).toBeTruthy()
      expect(set.link.body).toContain('{hostname}')
      expect(set.ui.ticket_opened).toContain('{ticket}')
    }
    expect(FALLBACK_LABELS).toEqual({ link: labelsFor('en').link, ui: labelsFor('en').ui })
  })

  it('resolves regional and odd locale tags, falling back to English', () => {
    expect(resolveLocale('de-AT')).toBe('de')
    expect(resolveLocale('RU_ru')).toBe('ru')
    expect(resolveLocale('pt-BR')).toBe('pt')
    expect(resolveLocale('ja-JP')).toBe('en')
    expect(resolveLocale('')).toBe('en')
    expect(resolveLocale(null)).toBe('en')
    expect(labelsFor('fr-CA').link.title).toBe('Ouvrir le lien externe ?')
    expect(fill('You are going to {hostname}. Continue?', { hostname: 'x.example' })).toBe('You are going to x.example. Continue?')
  })
})

describe('widget rules', () => {
  it('allows origins on the bot domains and their subdomains only', () => {
    const domains = ['example.com', 'shop.test.org']
    expect(originAllowed('https://example.com', domains)).toBe(true)
    expect(originAllowed('https://www.example.com:8443', domains)).toBe(true)
    expect(originAllowed('http://a.shop.test.org', domains)).toBe(true)
    expect(originAllowed('https://example.com.evil.net', domains)).toBe(false)
    expect(originAllowed('https://notexample.com', domains)).toBe(false)
    expect(originAllowed('null', domains)).toBe(false)
    expect(originAllowed('chrome-extension://example.com', domains)).toBe(false)
    expect(originAllowed(undefined, domains)).toBe(true)
    expect(originAllowed('https://anything.example', [])).toBe(true)
  })

  it('checks the message: required, at most 1000 characters (code points)', () => {
    expect(checkMessage('  hi  ')).toBe('hi')
    expect(() => checkMessage('   ')).toThrow(expect.objectContaining({ status: 422, code: 'message_required' }))
    expect(() => checkMessage(undefined)).toThrow(expect.objectContaining({ code: 'message_required' }))
    expect(checkMessage('😀'.repeat(1000))).toHaveLength(2000)
    expect(() => checkMessage('a'.repeat(1001))).toThrow(
      expect.objectContaining({ status: 422, code: 'message_too_long', options: expect.objectContaining({ extra: { max_chars: 1000 } }) }),
    )
  })

  it('points the loader at WIDGET_LOADER_URL or at widget.js beside it', () => {
    expect(widgetBundleUrl('', 'abc')).toBe('widget.js?v=abc')
    expect(widgetBundleUrl('https://cdn.example.com/chat/', 'abc')).toBe('https://cdn.example.com/chat/widget.js?v=abc')
    expect(widgetBundleUrl('https://cdn.example.com/w.js', 'abc')).toBe('https://cdn.example.com/w.js?v=abc')
  })
})
