import type { AttachmentMeta } from './attachments.repo.js'

/** A file a message took, as the turn uses it: images as their bytes, documents as their (redacted) text. */
export interface ClaimedAttachment extends AttachmentMeta {
  text: string | null
  /** an image's bytes as stored (metadata removed), for the model client to send as base64; null for a document */
  image: Uint8Array | null
}

/** What the chat turn reaches the attachments module through (stages/02-attachments.ts). */
export interface AttachmentsPort {
  /**
   * Gives message `messageId` the session's unused files among `ids` (each at most once), in the order of `ids`.
   * Fewer come back than asked when some are another session's, already sent or unknown.
   */
  claim(tenantId: string, sessionId: string, ids: readonly string[], messageId: string): Promise<ClaimedAttachment[]>
  /** Frees what a message took, when its turn refuses them all (so the visitor may send them again). */
  release(tenantId: string, messageId: string): Promise<void>
  /** The attachments of these messages (transcripts, logs, history), by message id. */
  byMessages(tenantId: string, messageIds: readonly string[]): Promise<Map<string, AttachmentMeta[]>>
}

/** Messages (with their ids), each with the files it sent (a visitor's or an operator's), without the ids (a ticket's thread). */
/** What the live module reaches the attachments module through: an operator's files claimed by their reply (issue 54). */
export interface OperatorFilesPort {
  /**
   * Gives the operator's message `messageId` the conversation's unsent files among `ids`, in the reply's
   * transaction; all of them or a 422 attachments_unavailable (nothing claimed: the transaction rolls back).
   */
  claim(tenantId: string, sessionId: string, ids: readonly string[], messageId: string, trx: unknown): Promise<AttachmentMeta[]>
}

export async function withFiles<M extends { id: string; role: string }>(
  port: Pick<AttachmentsPort, 'byMessages'> | undefined,
  tenantId: string,
  messages: M[],
): Promise<(Omit<M, 'id'> & { attachments: AttachmentMeta[] })[]> {
  const files = port
    ? await port.byMessages(
        tenantId,
        messages.map((m) => m.id),
      )
    : new Map<string, AttachmentMeta[]>()
  return messages.map(({ id, ...m }) => ({ ...m, attachments: files.get(id) ?? [] }))
}
