import { Type } from '@sinclair/typebox'
import { type Connector, ConnectorError, type ConnectorSettings, GITHUB_NOT_FOUND, type ListedArticle } from './connector.types.js'
import { inDocsFolder, trimSlashes } from './connectors.fns.js'
import type { Upstream } from './http.js'
import { checked } from './shape.js'

const Repo = Type.Object({ default_branch: Type.String({ minLength: 1, maxLength: 255 }) })
const Tree = Type.Object({
  truncated: Type.Boolean(),
  tree: Type.Array(Type.Object({ path: Type.String({ maxLength: 4096 }), type: Type.String(), sha: Type.String({ maxLength: 64 }) }), { maxItems: 200_000 }),
})
const Contents = Type.Object({
  content: Type.Optional(Type.String()),
  encoding: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sha: Type.String(),
  html_url: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
})

/** Files yielded to the sync per batch. */
const BATCH = 100
const enc = (path: string) => path.split('/').map(encodeURIComponent).join('/')

/** The repository's web address for an API base: github.com for api.github.com, `https://host` for Enterprise's `/api/v3`. */
export function webBase(apiBase: string): string {
  const u = new URL(apiBase)
  if (u.hostname === 'api.github.com') return 'https://github.com'
  return `${u.origin}${trimSlashes(trimSlashes(u.pathname).replace(/\/api\/v3$/, ''))}`
}

/**
 * A GitHub repository's Markdown and MDX under a folder: the recursive tree of `ref` (default: the repository's
 * `default_branch`) lists the files with their blob `sha`, so an unchanged file is never fetched again; a
 * changed one is read from the contents API (base64), or raw when it is over 1 MB. A `truncated` tree is an
 * incomplete listing. A 404 on the repository or the ref is named as such.
 */
export function githubConnector(s: ConnectorSettings, token: string | null, http: (auth: Record<string, string>) => Upstream): Connector {
  const api = http({ 'x-github-api-version': '2022-11-28', ...(token ? { authorization: `Bearer ${token}` } : {}) })
  const base = trimSlashes(s.base_url)
  const repo = s.repo!
  let ref = s.ref || null
  const web = `${webBase(base)}/${repo}`
  const notFound = GITHUB_NOT_FOUND

  return {
    async *list(signal) {
      if (!ref) ref = checked(Repo, (await api.json(`${base}/repos/${repo}`, signal, { notFound })).body, 'GitHub repository').default_branch
      const tree = checked(
        Tree,
        (await api.json(`${base}/repos/${repo}/git/trees/${encodeURIComponent(ref)}?recursive=1`, signal, { notFound, accept: 'application/vnd.github+json' }))
          .body,
        'GitHub tree',
      )
      const files = tree.tree.filter((e) => e.type === 'blob' && inDocsFolder(e.path, s.path ?? null))
      for (let i = 0; i < files.length; i += BATCH) {
        yield files.slice(i, i + BATCH).map((f): ListedArticle => {
          const url = `${web}/blob/${enc(ref!)}/${enc(f.path)}`
          const name = f.path.split('/').pop()!
          return { key: url, url, title: name.replace(/\.(mdx?|markdown)$/i, ''), version: f.sha, locale: null, hidden: null, file: f.path }
        })
      }
      if (tree.truncated)
        throw new ConnectorError('incomplete', 'GitHub truncated the repository tree (too many files); nothing was deleted — narrow `path` to the docs folder')
    },
    async content(a, signal) {
      const url = `${base}/repos/${repo}/contents/${enc(a.file!)}?ref=${encodeURIComponent(ref!)}`
      const c = checked(Contents, (await api.json(url, signal, { accept: 'application/vnd.github+json' })).body, 'GitHub file')
      // over 1 MB the contents API leaves `content` empty (encoding "none"): the raw media type has it
      const text =
        c.encoding === 'base64' && c.content
          ? Buffer.from(c.content.replace(/\s+/g, ''), 'base64').toString('utf8')
          : (await api.raw(url, signal, 'application/vnd.github.raw+json')).toString('utf8')
      return { format: 'markdown', text, url: c.html_url ?? null }
    },
  }
}
