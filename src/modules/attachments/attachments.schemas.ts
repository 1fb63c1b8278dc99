import { Type } from '@sinclair/typebox'
import { Uuid } from '../../http/schemas.js'

/** An attachment as every route shows it (contract: Attachments); never its bytes or text. */
export const AttachmentMetaSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  kind: Type.Union([Type.Literal('image'), Type.Literal('document')]),
})

/** A message's attachments (transcripts, tickets, /chat/logs, the widget's history). */
export const AttachmentList = Type.Array(AttachmentMetaSchema, { maxItems: 5 })

/** At most this many files per message (contract). */
export const MAX_ATTACHMENTS_PER_MESSAGE = 5

/** `attachment_ids` of POST /widget/chat and POST /chat. */
export const AttachmentIds = Type.Array(Uuid, {
  maxItems: MAX_ATTACHMENTS_PER_MESSAGE,
  uniqueItems: true,
  description: 'files uploaded to this session (POST /widget/attachments) and not yet sent; a message may be attachments alone',
})

export const AttachmentParams = Type.Object({ id: Uuid })
export const WidgetAttachmentQuery = Type.Object({ bot_id: Type.String({ minLength: 1, maxLength: 64 }), session_id: Uuid })
