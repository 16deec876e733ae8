import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { accounts, walletAuth as pb } from '@sluice/contracts';
import { DomainError } from '@sluice/core';
import type { GatewayDeps, RouteModule } from '../http/types.js';
import { ErrorBody, Id, iso } from '../schemas/common.js';
import { InternalAccount, internalAccountJson } from '../schemas/internal-account.schemas.js';
import {
  AccountQuery,
  AuthMethod,
  AuthSession,
  ChallengeBody,
  challengeJson,
  CreateCredentialBody,
  ExportBody,
  ExportResponse,
  PasskeyAuthChallenge,
  SigningChallenge,
  UpdateCredentialBody,
  VerifyBody,
} from '../schemas/wallet-auth.schemas.js';

type MethodType = 'OAUTH' | 'EMAIL_OTP' | 'PASSKEY';
const TYPE_TO_PB: Record<MethodType, pb.AuthMethodType> = {
  OAUTH: pb.AuthMethodType.OAUTH,
  EMAIL_OTP: pb.AuthMethodType.EMAIL_OTP,
  PASSKEY: pb.AuthMethodType.PASSKEY,
};
const typeName = (t: pb.AuthMethodType) => String(t).replace(/^AUTH_METHOD_TYPE_/, '') as MethodType;

/** Fields each credential type may carry on POST /auth/credentials (besides accountId and type). */
const CREATE_FIELDS: Record<MethodType, string[]> = {
  EMAIL_OTP: ['email'],
  OAUTH: ['oidcToken'],
  PASSKEY: ['nickname', 'challenge', 'attestation'],
};
const VERIFY_FIELDS: Record<MethodType, string[]> = {
  EMAIL_OTP: ['otp', 'clientPublicKey'],
  OAUTH: ['oidcToken', 'clientPublicKey'],
  PASSKEY: ['assertion'],
};

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 500: ErrorBody, 503: ErrorBody };
const IdParams = (type: string) => Type.Object({ id: Id(type) }, { additionalProperties: false });

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** The signed-retry part of a call: the body it binds and the two headers. */
function signed(request: FastifyRequest): pb.SignedRetry {
  const signature = header(request, 'Service-Wallet-Signature');
  const requestId = header(request, 'Request-Id');
  return {
    bodyJson: request.body === undefined || request.body === null ? '' : JSON.stringify(request.body),
    ...(signature ? { signature } : {}),
    ...(requestId ? { requestId } : {}),
  };
}

function authMethodJson(m: pb.AuthMethod) {
  return {
    id: m.id,
    accountId: m.accountId,
    type: typeName(m.type),
    nickname: m.nickname,
    ...(m.credentialId ? { credentialId: m.credentialId } : {}),
    createdAt: iso(m.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}

function sessionJson(s: pb.Session) {
  const m = s.authMethod!;
  return {
    id: s.id,
    accountId: s.accountId,
    authMethodId: s.credentialId,
    type: typeName(m.type),
    nickname: m.nickname,
    ...(m.credentialId ? { credentialId: m.credentialId } : {}),
    ...(s.encryptedSessionSigningKey ? { encryptedSessionSigningKey: s.encryptedSessionSigningKey } : {}),
    expiresAt: iso(s.expiresAt)!,
    createdAt: iso(s.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}

function rejectForeignFields(body: Record<string, unknown>, type: MethodType, allowed: Record<MethodType, string[]>, common: string[]): void {
  const bad = Object.keys(body).filter((k) => !common.includes(k) && !allowed[type].includes(k));
  if (bad.length)
    throw new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', `${bad[0]}: not a field of a ${type} credential`, {
      errors: bad.map((field) => ({ field, message: `not a field of a ${type} credential` })),
    });
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

/** 202 with the signing challenge, else the result with `status`. */
function answer<T>(reply: FastifyReply, r: { signingChallenge?: pb.SigningChallenge }, status: number, body: () => T) {
  if (r.signingChallenge) return reply.code(202).send(challengeJson(r.signingChallenge));
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
        tags: ['Embedded Wallet Auth'],
        operationId: 'createAuthCredential',
        summary: 'Register an authentication credential',
        description: `Registers an EMAIL_OTP, OAUTH or PASSKEY credential on an EMBEDDED_WALLET internal account (at most one EMAIL_OTP and one PASSKEY). The first credential needs no signature; later ones use the signed retry. ${SIGNED_HEADERS} Registration issues no session; EMAIL_OTP sends the code by email.`,
        body: CreateCredentialBody,
        response: { 201: AuthMethod, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as {
        accountId: string; type: MethodType; email?: string; oidcToken?: string; nickname?: string; challenge?: string;
        attestation?: { credentialId: string; clientDataJson: string; attestationObject: string; transports?: string[] };
      };
      rejectForeignFields(body, body.type, CREATE_FIELDS, ['accountId', 'type']);
      const platformId = request.platform.id;
      const account = await embeddedWallet(deps, platformId, body.accountId, 'accountId');
      let email = body.email;
      if (body.type === 'EMAIL_OTP' && email === undefined && account.customerId) {
        email = (await deps.clients.identity.getCustomer({ platformId, customerId: account.customerId })).customer?.email;
        if (!email)
          throw new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', 'email: required (the customer has no email address)', {
            errors: [{ field: 'email', message: 'is required: the customer of the account has no email address' }],
          });
      }
      const r = await wa.createCredential({
        platformId,
        accountId: body.accountId,
        type: TYPE_TO_PB[body.type],
        ...(email !== undefined ? { email } : {}),
        ...(body.oidcToken !== undefined ? { oidcToken: body.oidcToken } : {}),
        ...(body.nickname !== undefined ? { nickname: body.nickname } : {}),
        ...(body.challenge !== undefined ? { challenge: body.challenge } : {}),
        ...(body.attestation ? { attestation: { ...body.attestation, transports: body.attestation.transports ?? [] } } : {}),
        signed: signed(request),
      });
      return answer(reply, r, 201, () => authMethodJson(r.authMethod!));
    },
  );

  app.get(
    '/auth/credentials',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'listAuthCredentials',
        summary: 'List the credentials of an embedded wallet',
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(AuthMethod) }, { $id: 'AuthCredentialList' }), ...errors },
      },
    },
    async (request) => {
      const { accountId } = request.query as { accountId: string };
      const r = await wa.listCredentials({ platformId: request.platform.id, accountId });
      return { data: r.authMethods.map(authMethodJson) };
    },
  );

  app.post(
    '/auth/credentials/:id/challenge',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'challengeAuthCredential',
        summary: 'Re-issue a credential challenge',
        description: 'EMAIL_OTP: emails a fresh code (body optional) and returns the AuthMethod. PASSKEY: `clientPublicKey` required; returns a WebAuthn challenge bound to it, with the requestId for /verify. OAUTH has no challenge step.',
        params: IdParams('AuthMethod'),
        body: ChallengeBody,
        response: { 200: Type.Union([PasskeyAuthChallenge, AuthMethod]), ...errors },
      },
      // The body may be omitted (EMAIL_OTP): validate an absent body as `{}`.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = (request.body ?? {}) as { clientPublicKey?: string };
      const r = await wa.challengeCredential({
        platformId: request.platform.id,
        credentialId: id,
        ...(body.clientPublicKey !== undefined ? { clientPublicKey: body.clientPublicKey } : {}),
      });
      const m = authMethodJson(r.authMethod!);
      return r.challenge ? { ...m, credentialId: m.credentialId!, challenge: r.challenge, requestId: r.requestId!, expiresAt: iso(r.expiresAt)! } : m;
    },
  );

  app.post(
    '/auth/credentials/:id/verify',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'verifyAuthCredential',
        summary: 'Verify a credential and open a session',
        description: 'EMAIL_OTP: `otp` + `clientPublicKey`. OAUTH: a fresh `oidcToken` + `clientPublicKey`. PASSKEY: `assertion`, header `Request-Id` from /challenge. Returns the session with `encryptedSessionSigningKey` (HPKE to the client key).',
        params: IdParams('AuthMethod'),
        body: VerifyBody,
        response: { 200: AuthSession, ...errors },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as { type: MethodType; otp?: string; oidcToken?: string; clientPublicKey?: string; assertion?: pb.PasskeyAssertion };
      rejectForeignFields(body, body.type, VERIFY_FIELDS, ['type']);
      const requestId = header(request, 'Request-Id');
      const r = await wa.verifyCredential({
        platformId: request.platform.id,
        credentialId: id,
        type: TYPE_TO_PB[body.type],
        ...(body.otp !== undefined ? { otp: body.otp } : {}),
        ...(body.oidcToken !== undefined ? { oidcToken: body.oidcToken } : {}),
        ...(body.clientPublicKey !== undefined ? { clientPublicKey: body.clientPublicKey } : {}),
        ...(body.assertion ? { assertion: body.assertion } : {}),
        ...(requestId ? { requestId } : {}),
      });
      return sessionJson(r.session!);
    },
  );

  app.patch(
    '/auth/credentials/:id',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'updateAuthCredential',
        summary: 'Update an EMAIL_OTP credential',
        description: `Changes the email of an EMAIL_OTP credential (at least one field). ${SIGNED_HEADERS}`,
        params: IdParams('AuthMethod'),
        body: UpdateCredentialBody,
        response: { 200: AuthMethod, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = request.body as { email?: string };
      const r = await wa.updateCredential({
        platformId: request.platform.id,
        credentialId: id,
        ...(body.email !== undefined ? { email: body.email } : {}),
        signed: signed(request),
      });
      return answer(reply, r, 200, () => authMethodJson(r.authMethod!));
    },
  );

  app.delete(
    '/auth/credentials/:id',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'revokeAuthCredential',
        summary: 'Revoke a credential',
        description: `Revokes a credential and its sessions. The stamp must come from a session of a different credential of the account; the last credential cannot be revoked (400 LAST_CREDENTIAL). ${SIGNED_HEADERS}`,
        params: IdParams('AuthMethod'),
        response: { 202: SigningChallenge, 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const r = await wa.revokeCredential({ platformId: request.platform.id, credentialId: id, signed: signed(request) });
      return answer(reply, r, 204, () => null);
    },
  );

  app.get(
    '/auth/sessions',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'listAuthSessions',
        summary: 'List the active sessions of an embedded wallet',
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(AuthSession) }, { $id: 'AuthSessionList' }), ...errors },
      },
    },
    async (request) => {
      const { accountId } = request.query as { accountId: string };
      const r = await wa.listSessions({ platformId: request.platform.id, accountId });
      return { data: r.sessions.map(sessionJson) };
    },
  );

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'revokeAuthSession',
        summary: 'Revoke a session',
        description: SIGNED_HEADERS,
        params: IdParams('Session'),
        response: { 202: SigningChallenge, 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const r = await wa.revokeSession({ platformId: request.platform.id, sessionId: id, signed: signed(request) });
      return answer(reply, r, 204, () => null);
    },
  );

  app.patch(
    '/internal-accounts/:id',
    {
      schema: {
        tags: ['Internal Accounts'],
        operationId: 'updateInternalAccount',
        summary: 'Update an embedded wallet',
        description: `Changes \`privateEnabled\` of an EMBEDDED_WALLET internal account (at least one field). ${SIGNED_HEADERS}`,
        params: IdParams('InternalAccount'),
        body: Type.Object({ privateEnabled: Type.Optional(Type.Boolean({ description: 'wallet privacy' })) }, { additionalProperties: false }),
        response: { 200: InternalAccount, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = request.body as { privateEnabled?: boolean };
      if (body.privateEnabled === undefined)
        throw new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', 'privateEnabled: at least one update field is required', {
          errors: [{ field: 'privateEnabled', message: 'at least one update field is required' }],
        });
      const platformId = request.platform.id;
      await embeddedWallet(deps, platformId, id, 'id');
      const retry = signed(request);
      const action = pb.SignedAction.UPDATE_INTERNAL_ACCOUNT;
      if (!retry.signature && !retry.requestId) {
        const { signingChallenge } = await wa.createSigningRequest({ platformId, accountId: id, action, bodyJson: retry.bodyJson });
        return reply.code(202).send(challengeJson(signingChallenge!));
      }
      await wa.verifySignedRequest({ platformId, accountId: id, action, signed: retry });
      const { account } = await deps.clients.accounts.updateInternalAccount({ platformId, accountId: id, privateEnabled: body.privateEnabled });
      return internalAccountJson(account!);
    },
  );

  app.post(
    '/internal-accounts/:id/export',
    {
      schema: {
        tags: ['Embedded Wallet Auth'],
        operationId: 'exportInternalAccountWallet',
        summary: 'Export an embedded wallet',
        description: `Returns the wallet mnemonic HPKE-encrypted to \`clientPublicKey\` (export bundle). ${SIGNED_HEADERS}`,
        params: IdParams('InternalAccount'),
        body: ExportBody,
        response: { 200: ExportResponse, 202: SigningChallenge, ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const { clientPublicKey } = request.body as { clientPublicKey: string };
      await embeddedWallet(deps, request.platform.id, id, 'id');
      const r = await wa.exportWallet({ platformId: request.platform.id, accountId: id, clientPublicKey, signed: signed(request) });
      return answer(reply, r, 200, () => ({ id, encryptedWalletCredentials: r.encryptedWalletCredentials! }));
    },
  );
};

export default walletAuthRoutes;
