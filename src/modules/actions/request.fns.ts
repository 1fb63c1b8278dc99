import AjvModule, { type ValidateFunction } from 'ajv'
import type { ActionParameter } from '../../db/schema/actions.js'
import { ajvRegExp, patternProblem } from '../../lib/linear-regex.js'
import { redact } from '../tenants/privacy/pii.fns.js'
import { maskAll } from './secret-mask.fns.js'
import { dotSegmentIn, render, type Value } from './templates.fns.js'

/**
 * An action's request from its templates and one call's values: `model` parameters from the model's (or the
 * test console's) arguments, checked against their schemas; `visitor` parameters from the verified claims only
 * (an argument of the same name is ignored, whatever the model or visitor wrote); `secret` from the stored
 * values; `constant` from the definition.
 */

// ajv is CommonJS: its class is the module's default export under NodeNext
const Ajv = (AjvModule as unknown as { default: typeof AjvModule.default }).default
// `pattern` and `patternProperties` run on the linear-time engine: a tenant's pattern cannot stall the process
const ajv = new Ajv({ strict: false, allErrors: false, code: { regExp: ajvRegExp } })
const compiled = new Map<string, ValidateFunction | null>()

/** The first regular expression of a schema (`pattern`, a `patternProperties` key) the linear-time engine refuses: its path in the schema and why. */
export function badSchemaPattern(schema: unknown): { path: (string | number)[]; message: string } | null {
  let budget = 5000
  const walk = (v: unknown, path: (string | number)[]): { path: (string | number)[]; message: string } | null => {
    if (!v || typeof v !== 'object' || path.length > 32 || --budget < 0) return null
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = walk(v[i], [...path, i])
        if (hit) return hit
      }
      return null
    }
    const o = v as Record<string, unknown>
    if (typeof o.pattern === 'string') {
      const why = patternProblem(o.pattern)
      if (why) return { path: [...path, 'pattern'], message: why }
    }
    if (o.patternProperties && typeof o.patternProperties === 'object') {
      for (const k of Object.keys(o.patternProperties)) {
        const why = patternProblem(k)
        if (why) return { path: [...path, 'patternProperties', k], message: why }
      }
    }
    for (const [k, child] of Object.entries(o)) {
      if (k === 'pattern' || k === 'const' || k === 'enum' || k === 'default' || k === 'examples') continue
      const hit = walk(child, [...path, k])
      if (hit) return hit
    }
    return null
  }
  return walk(schema, [])
}

/** Why a parameter's schema is no JSON Schema, or null. */
export function schemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return 'must be a JSON Schema object'
  const pattern = badSchemaPattern(schema)
  if (pattern) return `has a regular expression at ${['schema', ...pattern.path].join('.')}: ${pattern.message}`
  if (!ajv.validateSchema(schema as object)) return `is not a valid JSON Schema: ${ajv.errorsText(ajv.errors, { dataVar: 'schema' })}`
  try {
    validator(schema as object)
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message.slice(0, 200)}`
  }
  return null
}

function validator(schema: object): ValidateFunction | null {
  const key = JSON.stringify(schema)
  if (!compiled.has(key)) {
    if (compiled.size > 2000) compiled.clear()
    compiled.set(key, ajv.compile(schema))
  }
  return compiled.get(key) ?? null
}

export interface ActionShape {
  method: string
  url: string
  headers: Record<string, string>
  body_template: string | null
  parameters: ActionParameter[]
}

export interface BuiltRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: string | null
}

export type Built =
  | {
      ok: true
      request: BuiltRequest
      /** the same request with every secret value masked: what any answer or log may show */
      masked: BuiltRequest
      /** the model's valid arguments */
      modelArgs: Record<string, Value>
      /** the arguments as the call log keeps them: PII redacted, visitor values named not shown */
      logArgs: Record<string, unknown>
    }
  | {
      ok: false
      argument: string | null
      message: string
      /** a value that would change where the call goes (a dot segment): a failed call, never sent, not a retry */
      unsafe?: true
      logArgs?: Record<string, unknown>
    }

const asValue = (v: unknown): Value | undefined =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : v === null || v === undefined ? undefined : JSON.stringify(v)

export { maskAll } from './secret-mask.fns.js'

export function buildRequest(
  action: ActionShape,
  args: Record<string, unknown>,
  claims: Record<string, unknown> | null,
  secrets: Record<string, string>,
): Built {
  const values: Record<string, Value | undefined> = {}
  const modelArgs: Record<string, Value> = {}
  const logArgs: Record<string, unknown> = {}
  for (const p of action.parameters) {
    if (p.source === 'model') {
      const raw = args[p.name]
      if (raw === undefined || raw === null || raw === '') {
        if (p.required) return { ok: false, argument: p.name, message: `${p.name} is required` }
        continue
      }
      const check = validator(p.schema)
      if (check && !check(raw))
        return { ok: false, argument: p.name, message: `${p.name} ${ajv.errorsText(check.errors, { dataVar: '' }).replace(/^\s+/, '')}` }
      const v = asValue(raw)
      if (v === undefined) continue
      values[p.name] = v
      modelArgs[p.name] = v
      logArgs[p.name] = typeof v === 'string' ? redact(v).text : v
    } else if (p.source === 'visitor') {
      const v = asValue(claims?.[p.claim ?? p.name])
      if (v === undefined) {
        if (p.required) return { ok: false, argument: p.name, message: `the visitor's verified identity has no ${p.claim ?? p.name}` }
        continue
      }
      values[p.name] = v
      logArgs[p.name] = `[visitor:${p.claim ?? p.name}]`
    } else if (p.source === 'secret') {
      const v = secrets[p.name]
      if (v === undefined) {
        if (p.required) return { ok: false, argument: p.name, message: `no secret is stored under ${p.name}` }
        continue
      }
      values[p.name] = v
    } else if (p.value !== null && p.value !== undefined) {
      values[p.name] = p.value
    }
  }
  const headers: Record<string, string> = {}
  for (const [h, t] of Object.entries(action.headers)) {
    const v = render(t, values, 'header').trim()
    if (v) headers[h] = v
  }
  const body = action.body_template === null ? null : render(action.body_template, values, 'body')
  const request: BuiltRequest = { method: action.method, url: render(action.url, values, 'url'), headers, body }
  const moved = dotSegmentIn(action.url, request.url)
  if (moved) {
    const argument = moved.find((n) => values[n] !== undefined) ?? moved[0] ?? null
    return { ok: false, argument, message: `${argument} is a "." or ".." path segment, which would change the address called`, unsafe: true, logArgs }
  }
  const masked: BuiltRequest = {
    method: request.method,
    url: maskAll(request.url, secrets),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskAll(v, secrets)])),
    body: body === null ? null : maskAll(body, secrets),
  }
  return { ok: true, request, masked, modelArgs, logArgs }
}

/** The JSON Schema of a tool: the `model` parameters only (what the model may fill). */
export function toolSchema(parameters: ActionParameter[]): Record<string, unknown> {
  const model = parameters.filter((p) => p.source === 'model')
  return {
    type: 'object',
    properties: Object.fromEntries(model.map((p) => [p.name, p.schema])),
    required: model.filter((p) => p.required).map((p) => p.name),
    additionalProperties: false,
  }
}
