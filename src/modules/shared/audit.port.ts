import type { FastifyRequest } from 'fastify'
import type { Logger } from 'pino'

/**
 * The workspace audit log as other modules see it: append one entry, inside the caller's transaction when
 * it passes one (`trx`, a Kysely executor) so the entry and the change commit together. The team workspace
 * module provides the stored implementation; until it is wired, entries go to the service log.
 */
export interface AuditEntry {
  /** null for the system (a job, the API key) */
  actorUserId: string | null
  ip: string | null
  /** created | updated | deleted | exported | signed_in | showed_original | rotated_key | ... */
  action: string
  itemType: string
  itemId: string | null
  detail?: Record<string, unknown>
}

export interface AuditPort {
  record(tenantId: string, entry: AuditEntry, trx?: unknown): Promise<void>
}

export function logAudit(log: Pick<Logger, 'info'>): AuditPort {
  return {
    async record(tenantId, e) {
      log.info({ tenantId, actor: e.actorUserId, action: e.action, itemType: e.itemType, itemId: e.itemId }, 'audit')
    },
  }
}

/** Records what the signed-in caller of `req` just did (after the change succeeded), from its address. */
export function auditRequest(audit: AuditPort, req: FastifyRequest, e: Omit<AuditEntry, 'actorUserId' | 'ip'>): Promise<void> {
  return audit.record(req.tenantId!, { actorUserId: req.authUser?.id ?? null, ip: req.ip ?? null, ...e })
}
