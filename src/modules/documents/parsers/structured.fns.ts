import { parseAllDocuments } from 'yaml'

/**
 * JSON and YAML become readable markdown. An OpenAPI 3 / Swagger 2 document becomes one section per
 * operation (method, path, summary, parameters, request body, responses) plus one per schema, so the
 * chunker can give each operation its own chunk. Anything else is rendered as nested headings and lists.
 */

export class StructuredParseError extends Error {}

export interface StructuredResult {
  text: string
  title: string | null
  isOpenApi: boolean
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Obj = { [k: string]: Json }

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export function parseJsonText(text: string): Json {
  try {
    return JSON.parse(text) as Json
  } catch (err) {
    throw new StructuredParseError(`Invalid JSON: ${(err as Error).message.slice(0, 200)}`)
  }
}

/** All documents of a YAML stream; aliases are capped (a "billion laughs" file is refused). */
export function parseYamlText(text: string): Json[] {
  let docs
  try {
    docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: false })
  } catch (err) {
    throw new StructuredParseError(`Invalid YAML: ${(err as Error).message.slice(0, 200)}`)
  }
  const list = Array.isArray(docs) ? docs : [docs]
  const out: Json[] = []
  for (const d of list) {
    if (d.errors.length) throw new StructuredParseError(`Invalid YAML: ${d.errors[0]!.message.split('\n')[0]!.slice(0, 200)}`)
    try {
      out.push(d.toJS({ maxAliasCount: 100 }) as Json)
    } catch (err) {
      throw new StructuredParseError(`Invalid YAML: ${(err as Error).message.slice(0, 200)}`)
    }
  }
  return out
}

export function isOpenApi(v: Json): v is Obj {
  if (!isObj(v)) return false
  const version = typeof v.openapi === 'string' ? v.openapi : typeof v.swagger === 'string' ? v.swagger : null
  return version !== null && /^[23]\./.test(version) && (isObj(v.paths) || isObj(v.webhooks))
}

export function renderStructured(docs: Json[], fallbackTitle: string | null): StructuredResult {
  if (docs.length === 1 && isOpenApi(docs[0]!)) return renderOpenApi(docs[0] as Obj)
  const parts = docs.map((d) => renderValue(d)).filter((s) => s.trim())
  const first = docs[0]
  const title = isObj(first) && typeof first.title === 'string' ? first.title : isObj(first) && typeof first.name === 'string' ? first.name : fallbackTitle
  return { text: parts.join('\n\n---\n\n').trim(), title: title ? String(title).slice(0, 300) : null, isOpenApi: false }
}

// ---------------------------------------------------------------------------------------------------
// Generic rendering

const MAX_HEADING_DEPTH = 4

const scalar = (v: Json): string => {
  if (v === null) return 'null'
  if (typeof v === 'string') return v.includes('\n') ? v : v
  return String(v)
}
const isScalar = (v: Json) => v === null || typeof v !== 'object'

/** Words from a key: `maxRetryCount` -> "max retry count" reads better in answers and in search. */
const humanKey = (k: string) =>
  k
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim() || k

function renderValue(v: Json, depth = 1, path: string[] = []): string {
  if (isScalar(v)) return scalar(v)
  if (Array.isArray(v)) return renderList(v, 0)
  const lines: string[] = []
  const nested: [string, Json][] = []
  for (const [k, val] of Object.entries(v)) {
    if (isScalar(val)) lines.push(formatScalarEntry(k, val))
    else if (Array.isArray(val) && val.every(isScalar)) lines.push(`- **${humanKey(k)}**: ${val.map(scalar).join(', ')}`)
    else nested.push([k, val])
  }
  const out: string[] = []
  if (lines.length) out.push(lines.join('\n'))
  for (const [k, val] of nested) {
    if (depth <= MAX_HEADING_DEPTH) {
      out.push(`${'#'.repeat(Math.min(depth + 1, 6))} ${[...path, humanKey(k)].slice(-2).join(' › ')}`)
      out.push(Array.isArray(val) ? renderList(val, 0) : renderValue(val, depth + 1, [...path, humanKey(k)]))
    } else {
      out.push(`- **${humanKey(k)}**:\n${indent(Array.isArray(val) ? renderList(val, 0) : renderNestedList(val as Obj, 0), 2)}`)
    }
  }
  return out.filter((s) => s.trim()).join('\n\n')
}

function formatScalarEntry(k: string, val: Json): string {
  const s = scalar(val)
  return s.includes('\n') ? `- **${humanKey(k)}**:\n\n${s}\n` : `- **${humanKey(k)}**: ${s}`
}

function renderList(arr: Json[], level: number): string {
  return arr
    .map((item) => {
      if (isScalar(item)) return `- ${scalar(item)}`
      if (Array.isArray(item)) return `-\n${indent(renderList(item, level + 1), 2)}`
      return `- ${renderNestedList(item, level + 1).replace(/^- /, '')}`
    })
    .join('\n')
}

function renderNestedList(o: Obj, level: number): string {
  if (level > 12) return '- …'
  return Object.entries(o)
    .map(([k, v]) => {
      if (isScalar(v)) return formatScalarEntry(k, v)
      if (Array.isArray(v))
        return v.every(isScalar) ? `- **${humanKey(k)}**: ${v.map(scalar).join(', ')}` : `- **${humanKey(k)}**:\n${indent(renderList(v, level + 1), 2)}`
      return `- **${humanKey(k)}**:\n${indent(renderNestedList(v, level + 1), 2)}`
    })
    .join('\n')
}

const indent = (s: string, n: number) => s.replace(/^/gm, ' '.repeat(n))

// ---------------------------------------------------------------------------------------------------
// OpenAPI

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const

function renderOpenApi(spec: Obj): StructuredResult {
  const info = isObj(spec.info) ? spec.info : {}
  const title = typeof info.title === 'string' ? info.title.trim() : 'API'
  const version = typeof info.version === 'string' || typeof info.version === 'number' ? String(info.version) : null
  const out: string[] = [`# ${title}${version ? ` (version ${version})` : ''}`]
  if (typeof info.description === 'string') out.push(info.description.trim())
  const servers = Array.isArray(spec.servers)
    ? spec.servers.filter(isObj).map((s) => String(s.url ?? ''))
    : typeof spec.host === 'string'
      ? [`${Array.isArray(spec.schemes) ? spec.schemes[0] : 'https'}://${spec.host}${typeof spec.basePath === 'string' ? spec.basePath : ''}`]
      : []
  if (servers.length) out.push(`Base URL: ${servers.join(', ')}`)
  const auth = securitySummary(spec)
  if (auth) out.push(`Authentication: ${auth}`)

  const resolver = makeResolver(spec)
  for (const [path, item] of Object.entries(isObj(spec.paths) ? spec.paths : {})) {
    if (!isObj(item)) continue
    const shared = Array.isArray(item.parameters) ? item.parameters : []
    for (const method of METHODS) {
      const op = item[method]
      if (!isObj(op)) continue
      out.push(renderOperation(method, path, op, shared, resolver, spec))
    }
  }
  const schemas = isObj(spec.components) && isObj(spec.components.schemas) ? spec.components.schemas : isObj(spec.definitions) ? spec.definitions : {}
  const names = Object.keys(schemas)
  if (names.length) {
    out.push('## Data models')
    for (const name of names) {
      const s = schemas[name]
      if (!isObj(s)) continue
      const lines = [`### ${name}`]
      if (typeof s.description === 'string') lines.push(s.description.trim())
      lines.push(describeSchema(s, resolver, 0))
      out.push(lines.filter(Boolean).join('\n\n'))
    }
  }
  return { text: out.filter((s) => s.trim()).join('\n\n'), title, isOpenApi: true }
}

function securitySummary(spec: Obj): string | null {
  const schemes =
    isObj(spec.components) && isObj(spec.components.securitySchemes)
      ? spec.components.securitySchemes
      : isObj(spec.securityDefinitions)
        ? spec.securityDefinitions
        : null
  if (!schemes) return null
  const parts = Object.entries(schemes)
    .filter(([, v]) => isObj(v))
    .map(([name, v]) => {
      const s = v as Obj
      const detail = [s.type, s.scheme, s.in && s.name ? `${String(s.name)} in ${String(s.in)}` : null].filter(Boolean).join(', ')
      return `${name} (${detail})`
    })
  return parts.length ? parts.join('; ') : null
}

type Resolver = (v: Json) => { value: Json; name: string | null }

function makeResolver(spec: Obj): Resolver {
  return (v) => {
    if (!isObj(v) || typeof v.$ref !== 'string') return { value: v, name: null }
    const ref = v.$ref
    if (!ref.startsWith('#/')) return { value: {}, name: ref }
    let cur: Json = spec
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
      cur = isObj(cur) ? (cur[key] ?? null) : null
    }
    return { value: cur ?? {}, name: ref.split('/').pop() ?? ref }
  }
}

function renderOperation(method: string, path: string, op: Obj, shared: Json[], resolve: Resolver, spec: Obj): string {
  const lines = [`## ${method.toUpperCase()} ${path}`]
  if (typeof op.summary === 'string') lines.push(`**Summary:** ${op.summary.trim()}`)
  if (typeof op.description === 'string') lines.push(op.description.trim())
  const meta: string[] = []
  if (typeof op.operationId === 'string') meta.push(`Operation ID: \`${op.operationId}\``)
  if (Array.isArray(op.tags) && op.tags.length) meta.push(`Tags: ${op.tags.map(String).join(', ')}`)
  if (op.deprecated === true) meta.push('Deprecated')
  if (meta.length) lines.push(meta.join(' · '))

  const params = [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])].map((p) => resolve(p).value).filter(isObj)
  const bodyParams = params.filter((p) => p.in === 'body') // Swagger 2
  const plain = params.filter((p) => p.in !== 'body')
  if (plain.length) {
    lines.push('**Parameters:**')
    lines.push(
      plain
        .map((p) => {
          const schema = isObj(p.schema) ? resolve(p.schema).value : p
          const type = isObj(schema) ? typeName(schema, resolve) : ''
          const bits = [String(p.in ?? ''), type, p.required === true ? 'required' : 'optional'].filter(Boolean).join(', ')
          return `- \`${String(p.name ?? '?')}\` (${bits})${typeof p.description === 'string' ? `: ${oneLine(p.description)}` : ''}`
        })
        .join('\n'),
    )
  }
  const requestBody = isObj(op.requestBody) ? resolve(op.requestBody).value : null
  if (isObj(requestBody) || bodyParams.length) {
    lines.push('**Request body:**')
    if (isObj(requestBody)) {
      if (typeof requestBody.description === 'string') lines.push(oneLine(requestBody.description))
      for (const [type, media] of Object.entries(isObj(requestBody.content) ? requestBody.content : {})) {
        const schema = isObj(media) && isObj(media.schema) ? media.schema : null
        lines.push(`Content type \`${type}\`${requestBody.required === true ? ' (required)' : ''}${schema ? `:\n${describeSchema(schema, resolve, 0)}` : ''}`)
      }
    }
    for (const p of bodyParams) lines.push(isObj(p.schema) ? describeSchema(p.schema, resolve, 0) : '')
  }
  const responses = isObj(op.responses) ? op.responses : {}
  if (Object.keys(responses).length) {
    lines.push('**Responses:**')
    const rs: string[] = []
    for (const [code, raw] of Object.entries(responses)) {
      const r = resolve(raw).value
      if (!isObj(r)) continue
      let line = `- \`${code}\`${typeof r.description === 'string' ? `: ${oneLine(r.description)}` : ''}`
      const schema = isObj(r.content)
        ? Object.values(r.content)
            .map((m) => (isObj(m) && isObj(m.schema) ? m.schema : null))
            .find(Boolean)
        : isObj(r.schema)
          ? r.schema
          : null
      if (schema) line += ` — returns ${typeName(schema, resolve)}`
      rs.push(line)
    }
    lines.push(rs.join('\n'))
  }
  const security = Array.isArray(op.security) ? op.security : Array.isArray(spec.security) ? spec.security : null
  if (security && security.length) {
    lines.push(
      `**Authentication:** ${
        security
          .filter(isObj)
          .flatMap((s) => Object.keys(s))
          .join(' or ') || 'none'
      }`,
    )
  }
  return lines.join('\n\n')
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 1000)

function typeName(schema: Json, resolve: Resolver): string {
  const { value, name } = resolve(schema)
  if (name) return name
  if (!isObj(value)) return ''
  if (value.type === 'array' && value.items) return `array of ${typeName(value.items, resolve) || 'items'}`
  if (Array.isArray(value.enum)) return `${String(value.type ?? 'enum')} (one of ${value.enum.slice(0, 12).map(String).join(', ')})`
  const t = typeof value.type === 'string' ? value.type : Array.isArray(value.type) ? value.type.join('|') : isObj(value.properties) ? 'object' : ''
  return typeof value.format === 'string' ? `${t} (${value.format})` : t
}

function describeSchema(schema: Json, resolve: Resolver, depth: number, seen: Set<string> = new Set()): string {
  const { value, name } = resolve(schema)
  if (!isObj(value)) return ''
  if (name && seen.has(name)) return `${'  '.repeat(depth)}- (${name}, see above)`
  const nextSeen = name ? new Set([...seen, name]) : seen
  const pad = '  '.repeat(depth)
  const lines: string[] = []
  if (name && depth === 0) lines.push(`${pad}Schema \`${name}\``)
  const compose = (['allOf', 'oneOf', 'anyOf'] as const).find((k) => Array.isArray(value[k]))
  if (compose) {
    lines.push(
      `${pad}- ${compose === 'allOf' ? 'all of' : compose === 'oneOf' ? 'one of' : 'any of'}: ${(value[compose] as Json[]).map((s) => typeName(s, resolve) || 'object').join(', ')}`,
    )
  }
  if (value.type === 'array' && value.items) {
    lines.push(`${pad}- array of ${typeName(value.items, resolve) || 'items'}`)
    if (depth < 2) lines.push(describeSchema(value.items, resolve, depth + 1, nextSeen))
  }
  const props = isObj(value.properties) ? value.properties : {}
  const required = new Set(Array.isArray(value.required) ? value.required.map(String) : [])
  for (const [p, ps] of Object.entries(props)) {
    const r = resolve(ps).value
    const desc = isObj(r) && typeof r.description === 'string' ? `: ${oneLine(r.description)}` : ''
    lines.push(`${pad}- \`${p}\` (${typeName(ps, resolve) || 'any'}${required.has(p) ? ', required' : ''})${desc}`)
    if (depth < 2 && isObj(r) && (isObj(r.properties) || (r.type === 'array' && isObj(r.items)))) {
      const inner = describeSchema(ps, resolve, depth + 1, nextSeen)
      if (inner.trim()) lines.push(inner)
    }
  }
  return lines.filter((l) => l.trim()).join('\n')
}
