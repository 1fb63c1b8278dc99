import { describe, expect, it } from 'vitest'
import { ChunkDetailCache } from './detail-cache.js'
import type { ChunkDetail } from './retrieval.repo.js'

const detail = (id: string, content = `text of ${id}`): ChunkDetail => ({
  id,
  document_id: 'd1',
  content,
  section_title: null,
  heading_path: 'Shipping',
  source_url: null,
  doc_title: 'Help',
  filename: 'help.md',
  doc_url: null,
})

describe('ChunkDetailCache', () => {
  it('serves details read at the same corpus version and reads the rest', () => {
    const c = new ChunkDetailCache(1 << 20)
    c.put('t1', 3, [detail('a'), detail('b')])
    const r = c.take('t1', 3, ['a', 'b', 'c'])
    expect(r.found.map((d) => d.id)).toEqual(['a', 'b'])
    expect(r.missing).toEqual(['c'])
  })

  it('misses after the corpus version moved (a re-index or a deletion) and for another tenant', () => {
    const c = new ChunkDetailCache(1 << 20)
    c.put('t1', 3, [detail('a')])
    expect(c.take('t1', 4, ['a']).missing).toEqual(['a'])
    expect(c.take('t2', 3, ['a']).missing).toEqual(['a'])
  })

  it('stays within its budget, least recently used out first, and keeps nothing at 0', () => {
    const c = new ChunkDetailCache(4_000)
    for (let i = 0; i < 20; i++) c.put('t1', 1, [detail(`c${i}`, 'x'.repeat(300))])
    const r = c.take(
      't1',
      1,
      Array.from({ length: 20 }, (_, i) => `c${i}`),
    )
    expect(r.found.length).toBeGreaterThan(0)
    expect(r.found.length).toBeLessThan(20)
    expect(r.missing).toContain('c0')
    const none = new ChunkDetailCache(0)
    none.put('t1', 1, [detail('a')])
    expect(none.take('t1', 1, ['a']).missing).toEqual(['a'])
  })
})
