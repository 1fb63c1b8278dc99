import { ValidationError } from '../../../../lib/errors.js'
import { literalAddressProblem } from '../crawler/ssrf.js'
import { trimSlashes } from './connectors.fns.js'
import type { Connector, ConnectorKind, ConnectorSettings } from './connector.types.js'
import { freshdeskConnector } from './freshdesk.js'
import { githubConnector } from './github.js'
import type { Upstream } from './http.js'
import { intercomConnector } from './intercom.js'
import { zendeskConnector } from './zendesk.js'

/** The `config` of a create request, as its schema bounds it. */
export interface ConnectorConfigInput {
  base_url?: string | null
  email?: string | null
  api_token?: string | null
  access_token?: string | null
  api_key?: string | null
  token?: string | null
  locales?: string[] | null
  repo?: string | null
  ref?: string | null
  path?: string | null
}

const DEFAULT_BASE: Partial<Record<ConnectorKind, string>> = { intercom: 'https://api.intercom.io', github: 'https://api.github.com' }
/** Where each kind's secret is given. */
export const SECRET_FIELD: Record<ConnectorKind, keyof ConnectorConfigInput> = {
  zendesk: 'api_token',
  intercom: 'access_token',
  freshdesk: 'api_key',
  github: 'token',
}

const invalid = (field: string, msg: string) => new ValidationError(['body', 'config', field], msg)

/** An account's API address: absolute http(s) without credentials, query or fragment; https unless private networks are allowed (tests). */
function baseUrl(kind: ConnectorKind, input: string | null | undefined, allowPrivateNetworks: boolean): string {
  const raw = input?.trim() || DEFAULT_BASE[kind]
  if (!raw) throw invalid('base_url', `base_url is required for ${kind} (the account's address, e.g. https://acme.${kind}.com)`)
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw invalid('base_url', 'base_url is not a URL')
  }
  if (u.protocol !== 'https:' && !(allowPrivateNetworks && u.protocol === 'http:')) throw invalid('base_url', 'base_url must start with https://')
  if (u.username || u.password) throw invalid('base_url', 'base_url must not carry a user name or password: give them in their own fields')
  if (u.search || u.hash) throw invalid('base_url', 'base_url must not have a query or a fragment')
  const blocked = literalAddressProblem(u.toString(), allowPrivateNetworks)
  if (blocked) throw invalid('base_url', `base_url points to ${blocked.describe()}, which connectors may not reach`)
  return `${u.origin}${trimSlashes(u.pathname)}`
}

function required(v: string | null | undefined, field: string, what: string): string {
  const s = v?.trim()
  if (!s) throw invalid(field, `${field} is required (${what})`)
  return s
}

/**
 * A create request's config as stored settings and the secret to encrypt, or a 422 naming the field. The
 * secret never goes into the settings (they are shown back as they are).
 */
export function parseConnectorConfig(
  kind: ConnectorKind,
  c: ConnectorConfigInput,
  allowPrivateNetworks: boolean,
): { settings: ConnectorSettings; secret: string | null } {
  const base_url = baseUrl(kind, c.base_url, allowPrivateNetworks)
  switch (kind) {
    case 'zendesk': {
      const email = required(c.email, 'email', "the agent's e-mail address the API token belongs to")
      if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email)) throw invalid('email', 'email is not an e-mail address')
      const locales = [...new Set((c.locales ?? []).map((l) => l.trim().toLowerCase()).filter(Boolean))]
      const bad = locales.findIndex((l) => !/^[a-z]{2,3}(-[a-z0-9]{2,8}){0,2}$/.test(l))
      if (bad >= 0) throw new ValidationError(['body', 'config', 'locales', bad], `${locales[bad]} is not a locale such as en-us`)
      return { settings: { base_url, email, ...(locales.length ? { locales } : {}) }, secret: required(c.api_token, 'api_token', 'a Zendesk API token') }
    }
    case 'intercom':
      return { settings: { base_url }, secret: required(c.access_token, 'access_token', 'an Intercom access token') }
    case 'freshdesk':
      return { settings: { base_url }, secret: required(c.api_key, 'api_key', 'a Freshdesk API key') }
    case 'github': {
      const repo = required(c.repo, 'repo', 'owner/name')
      if (!/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/.test(repo)) throw invalid('repo', 'repo must be owner/name')
      const ref = c.ref?.trim() || null
      if (ref && (ref.length > 255 || /\.\.|[\s~^:?*[\\]/.test(ref))) throw invalid('ref', 'ref is not a branch, tag or commit name')
      const path = trimSlashes(c.path?.trim() ?? '', true) || null
      if (path && (path.length > 1000 || path.split('/').includes('..'))) throw invalid('path', 'path must be a folder of the repository')
      return { settings: { base_url, repo, ref, path }, secret: c.token?.trim() || null }
    }
  }
}

/** The connector of a source, its secret decrypted by the caller. */
export function makeConnector(kind: ConnectorKind, s: ConnectorSettings, secret: string | null, http: (auth: Record<string, string>) => Upstream): Connector {
  switch (kind) {
    case 'zendesk':
      return zendeskConnector(s, secret ?? '', http)
    case 'intercom':
      return intercomConnector(s, secret ?? '', http)
    case 'freshdesk':
      return freshdeskConnector(s, secret ?? '', http)
    case 'github':
      return githubConnector(s, secret, http)
  }
}
