import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
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

export const tenantsRoutes =
  (deps: { guards: Guards; tenants: TenantsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, tenants } = deps
    const base = { tags: ['tenants'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.tenant }

    app.get('/tenants/me', { ...pre, schema: { ...base, operationId: 'getTenantMe', response: { 200: TenantResponse, ...errors } } }, (req) =>
      tenants.me(req.tenantId!),
    )
    app.patch(
      '/tenants/me',
      { ...pre, schema: { ...base, operationId: 'updateTenantMe', body: UpdateTenantRequest, response: { 200: TenantResponse, ...errors } } },
      (req) => tenants.update(req.tenantId!, req.body),
    )

    app.post(
      '/tenants/me/kyc/secret',
      { ...pre, schema: { ...base, operationId: 'createKycSecret', response: { 200: KycSecretGenerated, 409: ErrorBody, ...errors } } },
      (req) => tenants.createKycSecret(req.tenantId!),
    )
    app.post(
      '/tenants/me/kyc/rotate',
      { ...pre, schema: { ...base, operationId: 'rotateKycSecret', response: { 200: KycSecretGenerated, 400: ErrorBody, ...errors } } },
      (req) => tenants.rotateKycSecret(req.tenantId!),
    )
    app.get('/tenants/me/kyc/status', { ...pre, schema: { ...base, operationId: 'getKycStatus', response: { 200: KycStatus, ...errors } } }, (req) =>
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
      async (req, reply) => reply.code(201).send(await tenants.rotateApiKey(req.tenantId!, req.body)),
    )
    app.delete(
      '/tenants/me/api-keys/:key_id',
      { ...pre, schema: { ...base, operationId: 'revokeApiKey', params: ApiKeyParams, response: { 200: TenantApiKey, 409: ErrorBody, ...errors } } },
      (req) => tenants.revokeApiKey(req.tenantId!, req.params.key_id),
    )

    app.get('/tenants/me/privacy', { ...pre, schema: { ...base, operationId: 'getPrivacyConfig', response: { 200: PrivacyConfig, ...errors } } }, (req) =>
      tenants.privacy(req.tenantId!),
    )
    app.put(
      '/tenants/me/privacy',
      { ...pre, schema: { ...base, operationId: 'updatePrivacyConfig', body: UpdatePrivacyConfigRequest, response: { 200: PrivacyConfig, ...errors } } },
      (req) => tenants.updatePrivacy(req.tenantId!, req.body.optional_entity_types),
    )

    app.get(
      '/tenants/me/support-settings',
      { ...pre, schema: { ...base, operationId: 'getSupportSettings', response: { 200: SupportSettings, ...errors } } },
      (req) => tenants.supportSettings(req.tenantId!),
    )
    app.put(
      '/tenants/me/support-settings',
      {
        ...pre,
        schema: { ...base, operationId: 'updateSupportSettings', body: UpdateSupportSettingsRequest, response: { 200: SupportSettings, ...errors } },
      },
      (req) => tenants.updateSupportSettings(req.tenantId!, req.body),
    )
  }
