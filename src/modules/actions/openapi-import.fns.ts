import { parse as parseYaml } from 'yaml'
import type { ActionInput, ParameterInput } from './actions.service.js'
import { schemaProblem } from './request.fns.js'

/**
 * Actions from an OpenAPI 3.0/3.1 document (JSON or YAML text): one per operation (GET/POST/PUT/PATCH/DELETE),
 * its path, query and header parameters and the top-level properties of a JSON request body as `model`
 * parameters, internal `$ref`s resolved. The server URL is the document's first; a relative or missing one is
 * joined to `baseUrl`, else the action keeps a relative URL (and cannot be enabled until it is absolute).
 */

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const MAX_DEPTH = 25

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

export type ImportResult = { ok: true; actions: (ActionInput & { name: string; url: string })[] } | { ok: false; errors: string[] }

/** `#/a/b` inside the document; anything else (another file, a URL) is not followed. */
function lookup(doc: Obj, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`$ref ${ref} points outside the document`)
  let cur: unknown = doc
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isObj(cur) || !(key in cur)) throw new Error(`$ref ${ref} does not resolve`)
    cur = cur[key]
  }
  return cur
}

/** A copy with every internal $ref replaced by what it names; a cycle ends in an empty schema. */
export function resolveRefs(doc: Obj, value: unknown, seen: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveRefs(doc, v, seen))
  if (!isObj(value)) return value
  if (typeof value.$ref === 'string') {
    const ref = value.$ref
    if (seen.includes(ref) || seen.length > MAX_DEPTH) return {}
    return resolveRefs(doc, lookup(doc, ref), [...seen, ref])
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(doc, v, seen)]))
}

/** An operation id as an action name: lower snake case, starting with a letter, at most 64 characters. */
export function actionName(raw: string): string {
  const snake = raw
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
  const name = /^[a-z]/.test(snake) ? snake : `op_${snake}`
  return name.slice(0, 64).replace(/_+$/, '') || 'operation'
}

/** The longest server URL read from an imported document. */
const SERVER_URL_MAX_CHARS = 2048

/** The document's server URL with its variables at their defaults, joined to baseUrl when relative. */
function serverUrl(doc: Obj, baseUrl: string | undefined): string {
  const server = Array.isArray(doc.servers) && isObj(doc.servers[0]) ? doc.servers[0] : null
  // cut before any pattern sees it: a longer server URL is no usable one, and the patterns below are quadratic on
  // a hostile run of `/` or `{` (test/redos/allowlist.json)
  let url = typeof server?.url === 'string' ? server.url.slice(0, SERVER_URL_MAX_CHARS) : ''
  const vars = isObj(server?.variables) ? server.variables : {}
  url = url
    .replace(/\{([^}]+)\}/g, (m, v: string) => {
      const d = isObj(vars[v]) ? vars[v].default : undefined
      return typeof d === 'string' ? d : m
    })
    .slice(0, SERVER_URL_MAX_CHARS)
  if (/^https?:\/\//i.test(url)) return url.replace(/\/+$/, '')
  if (baseUrl) {
    try {
      return new URL(url || '/', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`)
        .toString()
        .slice(0, 2 * SERVER_URL_MAX_CHARS)
        .replace(/\/+$/, '')
    } catch {
      return url.replace(/\/+$/, '')
    }
  }
  return url.replace(/\/+$/, '')
}

const cleanSchema = (s: unknown): Record<string, unknown> => (isObj(s) ? s : { type: 'string' })

function operationActions(doc: Obj, base: string, wanted: Set<string> | null, errors: string[]) {
  const out: (ActionInput & { name: string; url: string })[] = []
  const found = new Set<string>()
  for (const [path, rawItem] of Object.entries(isObj(doc.paths) ? doc.paths : {})) {
    const item = resolveRefs(doc, rawItem) as Obj
    if (!isObj(item)) continue
    const shared = Array.isArray(item.parameters) ? item.parameters : []
    for (const method of METHODS) {
      const op = item[method]
      if (!isObj(op)) continue
      const opId = typeof op.operationId === 'string' && op.operationId ? op.operationId : `${method}_${path}`
      if (wanted && !wanted.has(opId)) continue
      found.add(opId)
      const name = actionName(opId)
      const params: ParameterInput[] = []
      const query: string[] = []
      const headers: Record<string, string> = {}
      const byKey = new Map<string, Obj>()
      for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) if (isObj(p)) byKey.set(`${p.in}:${p.name}`, p)
      for (const p of byKey.values()) {
        if (typeof p.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(p.name)) continue
        if (p.in === 'cookie') continue
        const schema = cleanSchema(p.schema)
        const problem = schemaProblem(schema)
        if (problem) errors.push(`${opId}: parameter ${p.name}: the schema ${problem}`)
        const description = typeof p.description === 'string' ? p.description.slice(0, 500) : undefined
        params.push({
          name: p.name,
          source: 'model',
          schema: description && !schema.description ? { ...schema, description } : schema,
          required: p.in === 'path' || p.required === true,
        })
        if (p.in === 'query') query.push(`${encodeURIComponent(p.name)}={${p.name}}`)
        if (p.in === 'header') headers[p.name] = `{${p.name}}`
      }
      let bodyTemplate: string | null = null
      const content = isObj(op.requestBody) && isObj(op.requestBody.content) ? op.requestBody.content : null
      const json = content ? (content['application/json'] as Obj | undefined) : undefined
      if (isObj(json) && isObj(json.schema) && isObj(json.schema.properties)) {
        const required = new Set(Array.isArray(json.schema.required) ? (json.schema.required as string[]) : [])
        const members: string[] = []
        for (const [prop, s] of Object.entries(json.schema.properties)) {
          if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(prop) || params.some((p) => p.name === prop)) continue
          const schema = cleanSchema(s)
          const problem = schemaProblem(schema)
          if (problem) errors.push(`${opId}: body property ${prop}: the schema ${problem}`)
          params.push({ name: prop, source: 'model', schema, required: required.has(prop) })
          members.push(`${JSON.stringify(prop)}: ${schema.type === 'string' || schema.type === undefined ? `"{${prop}}"` : `{${prop}}`}`)
        }
        bodyTemplate = `{${members.join(', ')}}`
      }
      const summary = [op.summary, op.description].filter((x): x is string => typeof x === 'string' && !!x.trim())
      out.push({
        name,
        description: (summary.join('. ') || `${method.toUpperCase()} ${path}`).slice(0, 2000),
        method: method.toUpperCase(),
        url: `${base}${path}${query.length ? `?${query.join('&')}` : ''}`,
        headers,
        body_template: bodyTemplate,
        parameters: params.slice(0, 30),
        kind: method === 'get' ? 'read' : 'write',
        response_fields: [],
      })
    }
  }
  for (const id of wanted ?? []) if (!found.has(id)) errors.push(`operation ${id} is not in the document`)
  return out
}

export function importOperations(text: string, opts: { operations?: string[]; baseUrl?: string }): ImportResult {
  let doc: unknown
  try {
    doc = parseYaml(text, { maxAliasCount: 100 })
  } catch (err) {
    return { ok: false, errors: [`The spec is neither JSON nor YAML: ${(err as Error).message.split('\n')[0]}`] }
  }
  if (!isObj(doc)) return { ok: false, errors: ['The spec is not an object'] }
  if (typeof doc.openapi !== 'string' || !/^3\.[01]\./.test(doc.openapi))
    return { ok: false, errors: ['openapi: the document must be OpenAPI 3.0.x or 3.1.x (Swagger 2.0 is not supported)'] }
  if (!isObj(doc.paths) || Object.keys(doc.paths).length === 0) return { ok: false, errors: ['paths: the document has no paths'] }
  if (opts.baseUrl && !/^https?:\/\//i.test(opts.baseUrl)) return { ok: false, errors: ['base_url must start with https:// or http://'] }
  const errors: string[] = []
  let actions: (ActionInput & { name: string; url: string })[]
  try {
    actions = operationActions(doc, serverUrl(doc, opts.baseUrl), opts.operations ? new Set(opts.operations) : null, errors)
  } catch (err) {
    return { ok: false, errors: [(err as Error).message] }
  }
  if (errors.length) return { ok: false, errors }
  if (actions.length === 0) return { ok: false, errors: ['The document has no GET, POST, PUT, PATCH or DELETE operation'] }
  return { ok: true, actions }
}
