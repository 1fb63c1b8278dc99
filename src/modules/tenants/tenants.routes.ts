import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { actorOf, bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import {
  ApiKeyParams,
  KycSecretGenerated,
  KycStatus,
  PrivacyConfig,
  RotateTenantApiKeyRequest,
  RotateTenantApiKeyResponse,
  SupportSettings,
  TenantApiKey,
  TenantApiKeyList,
  TenantResponse,
  UpdatePrivacyConfigRequest,
  UpdateSupportSettingsRequest,
  UpdateTenantRequest,
} from './tenants.schemas.js'
import type { TenantsService } from './tenants.service.js'

/**
 * The audit log as this module sees it (the shared AuditPort's shape; the shared module imports this one,
 * so the type is spelled here rather than imported).
 */
export interface TenantsAudit {
  record(
    tenantId: string,
    e: { actorUserId: string | null; ip: string | null; action: string; itemType: string; itemId: string | null; detail?: Record<string, unknown> },
  ): Promise<void>
}

export const tenantsRoutes =
  (deps: { guards: Guards; tenants: TenantsService; audit: TenantsAudit }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, tenants } = deps
    const base = { tags: ['tenants'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    // keys, the signing secret and the model key are the owner's; settings are owners' and admins'
    const pre = { preHandler: guards.can('workspace') }
    const settings = { preHandler: guards.can('settings') }
    /** Records a done change in the audit log (after the service call succeeded). */
    const note = async <T>(req: FastifyRequest, action: string, itemType: string, itemId: string | null, result: T, detail?: Record<string, unknown>) => {
      await deps.audit.record(req.tenantId!, { ...actorEntry(req), action, itemType, itemId, detail })
      return result
    }

    app.get(
      '/tenants/me',
      { preHandler: guards.can('member'), schema: { ...base, operationId: 'getTenantMe', response: { 200: TenantResponse, ...errors } } },
      (req) => tenants.me(req.tenantId!),
    )
    app.patch(
      '/tenants/me',
      {
        // the model key is the owner's; the name and support address are settings
        preHandler: (req) => guards.can((req.body as { llm_api_key?: unknown }).llm_api_key !== undefined ? 'workspace' : 'settings')(req),
        schema: {
          ...base,
          operationId: 'updateTenantMe',
          description: 'Name and support address: owners and admins. llm_api_key (the model key): owners only.',
          body: UpdateTenantRequest,
          response: { 200: TenantResponse, ...errors },
        },
      },
      async (req) => {
        const out = await tenants.update(req.tenantId!, req.body)
        const { llm_api_key, ...rest } = req.body
        if (llm_api_key !== undefined) await note(req, llm_api_key ? 'model_key_set' : 'model_key_removed', 'tenant', req.tenantId, null)
        if (Object.keys(rest).length) await note(req, 'updated', 'tenant', req.tenantId, null, { fields: Object.keys(rest) })
        return out
      },
    )

    app.post(
      '/tenants/me/kyc/secret',
      { ...pre, schema: { ...base, operationId: 'createKycSecret', response: { 200: KycSecretGenerated, 409: ErrorBody, ...errors } } },
      async (req) => note(req, 'rotated_key', 'signing_secret', null, await tenants.createKycSecret(req.tenantId!), { created: true }),
    )
    app.post(
      '/tenants/me/kyc/rotate',
      { ...pre, schema: { ...base, operationId: 'rotateKycSecret', response: { 200: KycSecretGenerated, 400: ErrorBody, ...errors } } },
      async (req) => note(req, 'rotated_key', 'signing_secret', null, await tenants.rotateKycSecret(req.tenantId!)),
    )
    app.get('/tenants/me/kyc/status', { ...settings, schema: { ...base, operationId: 'getKycStatus', response: { 200: KycStatus, ...errors } } }, (req) =>
      tenants.kycStatus(req.tenantId!),
    )

    app.get(
      '/tenants/me/api-keys',
      { ...pre, schema: { ...base, operationId: 'listApiKeys', response: { 200: TenantApiKeyList, ...errors } } },
      async (req) => ({ items: await tenants.listApiKeys(req.tenantId!) }),
    )
    app.post(
      '/tenants/me/api-keys/rotate',
      {
        ...pre,
        // A POST without any body rotates with the defaults.
        preValidation: async (req) => {
          req.body ??= { revoke_old_immediately: false }
        },
        schema: { ...base, operationId: 'rotateApiKey', body: RotateTenantApiKeyRequest, response: { 201: RotateTenantApiKeyResponse, ...errors } },
      },
      async (req, reply) => {
        const out = await tenants.rotateApiKey(req.tenantId!, req.body)
        return reply.code(201).send(await note(req, 'rotated_key', 'api_key', null, out, { revoke_old_immediately: req.body.revoke_old_immediately ?? false }))
      },
    )
    app.delete(
      '/tenants/me/api-keys/:key_id',
      { ...pre, schema: { ...base, operationId: 'revokeApiKey', params: ApiKeyParams, response: { 200: TenantApiKey, 409: ErrorBody, ...errors } } },
      async (req) => note(req, 'revoked_key', 'api_key', req.params.key_id, await tenants.revokeApiKey(req.tenantId!, req.params.key_id)),
    )

    app.get('/tenants/me/privacy', { ...settings, schema: { ...base, operationId: 'getPrivacyConfig', response: { 200: PrivacyConfig, ...errors } } }, (req) =>
      tenants.privacy(req.tenantId!),
    )
    app.put(
      '/tenants/me/privacy',
      { ...settings, schema: { ...base, operationId: 'updatePrivacyConfig', body: UpdatePrivacyConfigRequest, response: { 200: PrivacyConfig, ...errors } } },
      async (req) => note(req, 'updated', 'privacy_settings', null, await tenants.updatePrivacy(req.tenantId!, req.body.optional_entity_types)),
    )

    app.get(
      '/tenants/me/support-settings',
      { ...settings, schema: { ...base, operationId: 'getSupportSettings', response: { 200: SupportSettings, ...errors } } },
      (req) => tenants.supportSettings(req.tenantId!),
    )
    app.put(
      '/tenants/me/support-settings',
      {
        ...settings,
        schema: { ...base, operationId: 'updateSupportSettings', body: UpdateSupportSettingsRequest, response: { 200: SupportSettings, ...errors } },
      },
      async (req) => note(req, 'updated', 'support_settings', null, await tenants.updateSupportSettings(req.tenantId!, req.body)),
    )
  }

const actorEntry = (req: FastifyRequest) => {
  const a = actorOf(req)
  return { actorUserId: a.userId, ip: a.ip }
}
