import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { accounts, walletAuth as pb } from '@sluice/contracts';
import {
  AuthMethod,
  AuthSession,
  InternalAccount,
  authMethodJson,
  authSessionJson,
  internalAccountJson,
  iso,
  type AuthMethodTypeName,
} from '@sluice/api';
import { DomainError } from '@sluice/core';
import { headerOf, optionalBody } from '../http/request.helpers.js';
import type { GatewayDeps, RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import {
  AccountQuery,
  AuthCredentialList,
  AuthSessionList,
  ChallengeBody,
  authChallengeJson,
  AuthSignedRequestChallenge,
  challengeJson,
  CreateCredentialBody,
  ExportBody,
  ExportResponse,
  IdParams,
  PasskeyAuthChallenge,
  RefreshSessionBody,
  SigningChallenge,
  UpdateCredentialBody,
  UpdateInternalAccountBody,
  VerifyBody,
} from '../schemas/wallet-auth.schemas.js';

const TYPE_TO_PB: Record<AuthMethodTypeName, pb.AuthMethodType> = {
  OAUTH: pb.AuthMethodType.OAUTH,
  EMAIL_OTP: pb.AuthMethodType.EMAIL_OTP,
  PASSKEY: pb.AuthMethodType.PASSKEY,
};

const TAGS = ['Embedded Wallet Auth'];
const errors = errorResponses();

/** The signed-retry part of a call: the body it binds and the two headers. */
function signed(request: FastifyRequest): pb.SignedRetry {
  const signature = headerOf(request, 'Service-Wallet-Signature');
  const requestId = headerOf(request, 'Request-Id');
  return {
    bodyJson: request.body === undefined || request.body === null ? '' : JSON.stringify(request.body),
    ...(signature ? { signature } : {}),
    ...(requestId ? { requestId } : {}),
  };
}

/** The account must be an EMBEDDED_WALLET internal account of the caller's platform (another platform's: 404). */
async function embeddedWallet(deps: GatewayDeps, platformId: string, accountId: string, field: string) {
  const { account } = await deps.clients.accounts.getInternalAccount({ platformId, accountId });
  if (!account || account.type !== accounts.InternalAccountType.EMBEDDED_WALLET)
    throw new DomainError('INVALID_ARGUMENT', 'NOT_EMBEDDED_WALLET', `${field}: credentials and exports apply to EMBEDDED_WALLET internal accounts only`, {
      errors: [{ field, message: 'must be an EMBEDDED_WALLET internal account' }],
    });
  return account;
}

/** 202 with the signing challenge (with the credential `type` in the credential flows), else the result with `status`. */
function answer<T>(reply: FastifyReply, r: { signingChallenge?: pb.SigningChallenge }, status: number, body: () => T) {
  const c = r.signingChallenge;
  if (c) return reply.code(202).send(c.credentialType !== pb.AuthMethodType.UNSPECIFIED ? authChallengeJson(c) : challengeJson(c));
  return status === 204 ? reply.code(204).send() : reply.code(status).send(body());
}

const SIGNED_HEADERS =
  'Signed retry: the first call (no signature headers) answers 202 with payloadToSign/requestId/expiresAt; repeat the same request with headers `Service-Wallet-Signature` (a stamp by an active session key of the account) and `Request-Id`.';

/**
 * Embedded-wallet authentication: credentials (EMAIL_OTP, OAUTH, PASSKEY), sessions and
 * wallet export, served by wallet-auth over gRPC. Flows and formats: docs/wallet-auth.md.
 */
const walletAuthRoutes: RouteModule = (app, deps) => {
  const wa = deps.clients.walletAuth;

  app.post(
    '/auth/credentials',
    {
      schema: {
        tags: TAGS,
        operationId: 'createAuthCredential',
        summary: 'Register an authentication credential',
        description: `Registers an EMAIL_OTP, OAUTH or PASSKEY credential on an EMBEDDED_WALLET internal account (at most one EMAIL_OTP and one PASSKEY). The first credential needs no signature; later ones use the signed retry. ${SIGNED_HEADERS} Registration issues no session; EMAIL_OTP sends the code by email.`,
        body: CreateCredentialBody,
        response: { 201: AuthMethod, 202: AuthSignedRequestChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const platformId = request.platform.id;
      const account = await embeddedWallet(deps, platformId, body.accountId, 'accountId');
      let fields: Partial<pb.CreateCredentialRequest> = {};
      if (body.type === 'EMAIL_OTP') {
        let email = body.email;
        if (email === undefined && account.customerId) {
          email = (await deps.clients.identity.getCustomer({ platformId, customerId: account.customerId })).customer?.email;
          if (!email)
            throw new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', 'email: required (the customer has no email address)', {
              errors: [{ field: 'email', message: 'is required: the customer of the account has no email address' }],
            });
        }
        fields = email !== undefined ? { email } : {};
      } else if (body.type === 'OAUTH') {
        fields = body.oidcToken !== undefined ? { oidcToken: body.oidcToken } : {};
      } else {
        fields = {
          ...(body.nickname !== undefined ? { nickname: body.nickname } : {}),
          ...(body.challenge !== undefined ? { challenge: body.challenge } : {}),
          ...(body.attestation ? { attestation: { ...body.attestation, transports: body.attestation.transports ?? [] } } : {}),
        };
      }
      const r = await wa.createCredential({
        platformId,
        accountId: body.accountId,
        type: TYPE_TO_PB[body.type],
        ...fields,
        signed: signed(request),
      });
      return answer(reply, r, 201, () => authMethodJson(r.authMethod!));
    },
  );

  app.get(
    '/auth/credentials',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAuthCredentials',
        summary: 'List the credentials of an embedded wallet',
        querystring: AccountQuery,
        response: { 200: AuthCredentialList, ...errors },
      },
    },
    async (request) => {
      const r = await wa.listCredentials({ platformId: request.platform.id, accountId: request.query.accountId });
      return { data: r.authMethods.map(authMethodJson) };
    },
  );

  app.post(
    '/auth/credentials/:id/challenge',
    {
      schema: {
        tags: TAGS,
        operationId: 'challengeAuthCredential',
        summary: 'Re-issue a credential challenge',
        description: 'EMAIL_OTP: emails a fresh code (body optional) and returns the AuthMethod. PASSKEY: `clientPublicKey` required; returns a WebAuthn challenge bound to it, with the requestId for /verify. OAUTH has no challenge step.',
        params: IdParams('AuthMethod'),
        body: ChallengeBody,
        response: { 200: Type.Union([PasskeyAuthChallenge, AuthMethod]), ...errors },
      },
      // The body may be omitted (EMAIL_OTP).
      preValidation: optionalBody,
    },
    async (request) => {
      const { clientPublicKey } = request.body;
      const r = await wa.challengeCredential({
        platformId: request.platform.id,
        credentialId: request.params.id,
        ...(clientPublicKey !== undefined ? { clientPublicKey } : {}),
      });
      const m = authMethodJson(r.authMethod!);
      return r.challenge ? { ...m, credentialId: m.credentialId!, challenge: r.challenge, requestId: r.requestId!, expiresAt: iso(r.expiresAt)! } : m;
    },
  );

  app.post(
    '/auth/credentials/:id/verify',
    {
      schema: {
        tags: TAGS,
        operationId: 'verifyAuthCredential',
        summary: 'Verify a credential and open a session',
        description: 'EMAIL_OTP: `otp` + `clientPublicKey`. OAUTH: a fresh `oidcToken` + `clientPublicKey`. PASSKEY: `assertion`, header `Request-Id` from /challenge. Returns the session with `encryptedSessionSigningKey` (HPKE to the client key).',
        params: IdParams('AuthMethod'),
        body: VerifyBody,
        response: { 200: AuthSession, ...errors },
      },
    },
    async (request) => {
      const body = request.body;
      const requestId = headerOf(request, 'Request-Id');
      const fields: Partial<pb.VerifyCredentialRequest> =
        body.type === 'PASSKEY'
          ? { ...(body.assertion ? { assertion: body.assertion } : {}) }
          : {
              ...(body.type === 'EMAIL_OTP' && body.otp !== undefined ? { otp: body.otp } : {}),
              ...(body.type === 'OAUTH' && body.oidcToken !== undefined ? { oidcToken: body.oidcToken } : {}),
              ...(body.clientPublicKey !== undefined ? { clientPublicKey: body.clientPublicKey } : {}),
            };
      const r = await wa.verifyCredential({
        platformId: request.platform.id,
        credentialId: request.params.id,
        type: TYPE_TO_PB[body.type],
        ...fields,
        ...(requestId ? { requestId } : {}),
      });
      return authSessionJson(r.session!);
    },
  );

  app.patch(
    '/auth/credentials/:id',
    {
      schema: {
        tags: TAGS,
        operationId: 'updateAuthCredential',
        summary: 'Update an EMAIL_OTP credential',
        description: `Changes the email of an EMAIL_OTP credential (at least one field). ${SIGNED_HEADERS}`,
        params: IdParams('AuthMethod'),
        body: UpdateCredentialBody,
        response: { 200: AuthMethod, 202: AuthSignedRequestChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const { email } = request.body;
      const r = await wa.updateCredential({
        platformId: request.platform.id,
        credentialId: request.params.id,
        ...(email !== undefined ? { email } : {}),
        signed: signed(request),
      });
      return answer(reply, r, 200, () => authMethodJson(r.authMethod!));
    },
  );

  app.delete(
    '/auth/credentials/:id',
    {
      schema: {
        tags: TAGS,
        operationId: 'revokeAuthCredential',
        summary: 'Revoke a credential',
        description: `Revokes a credential and its sessions. The stamp must come from a session of a different credential of the account; the last credential cannot be revoked (400 LAST_CREDENTIAL). ${SIGNED_HEADERS}`,
        params: IdParams('AuthMethod'),
        response: { 202: AuthSignedRequestChallenge, 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const r = await wa.revokeCredential({ platformId: request.platform.id, credentialId: request.params.id, signed: signed(request) });
      return answer(reply, r, 204, () => null);
    },
  );

  app.get(
    '/auth/sessions',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAuthSessions',
        summary: 'List the active sessions of an embedded wallet',
        querystring: AccountQuery,
        response: { 200: AuthSessionList, ...errors },
      },
    },
    async (request) => {
      const r = await wa.listSessions({ platformId: request.platform.id, accountId: request.query.accountId });
      return { data: r.sessions.map(authSessionJson) };
    },
  );

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        tags: TAGS,
        operationId: 'revokeAuthSession',
        summary: 'Revoke a session',
        description: SIGNED_HEADERS,
        params: IdParams('Session'),
        response: { 202: AuthSignedRequestChallenge, 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const r = await wa.revokeSession({ platformId: request.platform.id, sessionId: request.params.id, signed: signed(request) });
      return answer(reply, r, 204, () => null);
    },
  );

  app.post(
    '/auth/sessions/:id/refresh',
    {
      schema: {
        tags: TAGS,
        operationId: 'refreshAuthSession',
        summary: 'Refresh a session',
        description: `Issues a new session of the same credential without verifying it again: \`encryptedSessionSigningKey\` is sealed to \`clientPublicKey\` and delivered once. The session must be active on both steps (expired or revoked: 401 SESSION_NOT_ACTIVE; verify the credential again) and the stamp must be made with its own key; it stays active until it expires. ${SIGNED_HEADERS}`,
        params: IdParams('Session'),
        body: RefreshSessionBody,
        response: { 201: AuthSession, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const r = await wa.refreshSession({
        platformId: request.platform.id,
        sessionId: request.params.id,
        clientPublicKey: request.body.clientPublicKey,
        signed: signed(request),
      });
      return answer(reply, r, 201, () => authSessionJson(r.session!));
    },
  );

  app.patch(
    '/internal-accounts/:id',
    {
      schema: {
        tags: ['Internal Accounts'],
        operationId: 'updateInternalAccount',
        summary: 'Update an embedded wallet',
        description: `Changes \`privateEnabled\` of an EMBEDDED_WALLET internal account. ${SIGNED_HEADERS}`,
        params: IdParams('InternalAccount'),
        body: UpdateInternalAccountBody,
        response: { 200: InternalAccount, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      const platformId = request.platform.id;
      await embeddedWallet(deps, platformId, id, 'id');
      const retry = signed(request);
      const action = pb.SignedAction.UPDATE_INTERNAL_ACCOUNT;
      if (!retry.signature && !retry.requestId) {
        const { signingChallenge } = await wa.createSigningRequest({ platformId, accountId: id, action, bodyJson: retry.bodyJson });
        return reply.code(202).send(challengeJson(signingChallenge!));
      }
      await wa.verifySignedRequest({ platformId, accountId: id, action, signed: retry });
      const { account } = await deps.clients.accounts.updateInternalAccount({
        platformId,
        accountId: id,
        privateEnabled: request.body.privateEnabled,
      });
      return reply.send(internalAccountJson(account!));
    },
  );

  app.post(
    '/internal-accounts/:id/export',
    {
      schema: {
        tags: TAGS,
        operationId: 'exportInternalAccountWallet',
        summary: 'Export an embedded wallet',
        description: `Returns the wallet mnemonic HPKE-encrypted to \`clientPublicKey\` (export bundle). ${SIGNED_HEADERS}`,
        params: IdParams('InternalAccount'),
        body: ExportBody,
        response: { 200: ExportResponse, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      await embeddedWallet(deps, request.platform.id, id, 'id');
      const r = await wa.exportWallet({
        platformId: request.platform.id,
        accountId: id,
        clientPublicKey: request.body.clientPublicKey,
        signed: signed(request),
      });
      return answer(reply, r, 200, () => ({ id, encryptedWalletCredentials: r.encryptedWalletCredentials! }));
    },
  );
};

export default walletAuthRoutes;
