import type { paths } from './schema'

/** Response and request body types by path, straight from the generated schema. */
type Ok<T> = T extends { responses: { 200: { content: { 'application/json': infer R } } } }
  ? R
  : T extends { responses: { 201: { content: { 'application/json': infer R } } } }
    ? R
    : T extends { responses: { 202: { content: { 'application/json': infer R } } } }
      ? R
      : never
export type Res<P extends keyof paths, M extends keyof paths[P]> = Ok<paths[P][M]>
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : never

export type Me = Res<'/auth/me', 'get'>
export type Tenant = Res<'/tenants/me', 'get'>
export type Bot = Res<'/bots/{bot_id}', 'get'>
export type DocumentItem = Res<'/documents', 'get'>['documents'][number]
export type UrlSource = Res<'/documents/sources', 'get'>['url_sources'][number]
export type Ticket = Res<'/escalations/{ticket_id}', 'get'>
export type Session = Res<'/chat/sessions', 'get'>['sessions'][number]
export type LogMessage = Res<'/chat/logs/session/{session_id}', 'get'>['messages'][number]
export type Faq = Res<'/knowledge/faq', 'get'>['items'][number]
export type Gap = Res<'/gap-analyzer', 'get'>['mode_a_items'][number]
export type ApiKey = Res<'/tenants/me/api-keys', 'get'>['items'][number]
export type PiiEvent = Res<'/tenants/privacy/pii-events', 'get'>['items'][number]
export type Member = Res<'/tenants/me/members', 'get'>['items'][number]
export type Invitation = Res<'/tenants/me/invitations', 'get'>['items'][number]
export type AuditEntry = Res<'/tenants/me/audit-log', 'get'>['items'][number]
