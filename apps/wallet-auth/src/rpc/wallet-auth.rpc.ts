import { walletAuth as pb } from '@sluice/contracts';
import type { AsyncService } from '@sluice/rpc';
import { SIGNED_ACTIONS, type SignedAction } from '../domain/crypto/index.js';
import { AUTH_METHOD_TYPES, type AuthMethodRecord, type AuthMethodType, type SessionRecord, type Signed, type SignedRetryRequest, type SigningChallengeOut } from '../domain/model.js';
import type { CredentialsService } from '../app/credentials.service.js';
import type { SigningService } from '../app/signing.service.js';

/** The domain's name of a proto credential type; none for UNSPECIFIED or an unknown value (the app refuses it). */
function typeFromPb(t: pb.AuthMethodType): AuthMethodType | undefined {
  return AUTH_METHOD_TYPES.find((name) => pb.AuthMethodType[name] === t);
}

/** The domain's name of a proto signed action; none for UNSPECIFIED or an unknown value (the app refuses it). */
function actionFromPb(a: pb.SignedAction): SignedAction | undefined {
  return SIGNED_ACTIONS.find((name) => pb.SignedAction[name] === a);
}

function signedFromPb(s: pb.SignedRetry | undefined): SignedRetryRequest {
  return { bodyJson: s?.bodyJson ?? '', signature: s?.signature, requestId: s?.requestId };
}

function authMethodToPb(m: AuthMethodRecord): pb.AuthMethod {
  return {
    id: m.id,
    accountId: m.accountId,
    type: pb.AuthMethodType[m.type],
    nickname: m.nickname,
    ...(m.credentialId ? { credentialId: m.credentialId } : {}),
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

function sessionToPb(s: SessionRecord, method: AuthMethodRecord | undefined, bundle?: string): pb.Session {
  return {
    ...(method ? { authMethod: authMethodToPb(method) } : {}),
    id: s.id,
    accountId: s.accountId,
    credentialId: s.authMethodId,
    publicKey: s.publicKey,
    expiresAt: s.expiresAt,
    createdAt: s.createdAt,
    ...(bundle ? { encryptedSessionSigningKey: bundle } : {}),
  };
}

function challengeToPb(c: SigningChallengeOut): pb.SigningChallenge {
  return {
    payloadToSign: c.payloadToSign,
    requestId: c.requestId,
    expiresAt: c.expiresAt,
    credentialType: c.credentialType ? pb.AuthMethodType[c.credentialType] : pb.AuthMethodType.UNSPECIFIED,
  };
}

/** The answer of a signed action: its 202 signing challenge, or what `done` makes of its result. */
function signedToPb<T, R>(r: Signed<T>, done: (t: T) => R): R | { signingChallenge: pb.SigningChallenge } {
  return r.challenge === undefined ? done(r.done) : { signingChallenge: challengeToPb(r.challenge) };
}

/** gRPC handlers of WalletAuthService: translate proto <-> application calls. */
export function walletAuthHandlers(deps: { credentials: CredentialsService; signing: SigningService }): AsyncService<pb.WalletAuthServiceServer> {
  const { credentials, signing } = deps;
  return {
    async createCredential(req) {
      const r = await credentials.create(
        req.platformId,
        {
          accountId: req.accountId,
          type: typeFromPb(req.type),
          email: req.email,
          oidcToken: req.oidcToken,
          nickname: req.nickname,
          challenge: req.challenge,
          attestation: req.attestation && {
            credentialId: req.attestation.credentialId,
            clientDataJson: req.attestation.clientDataJson,
            attestationObject: req.attestation.attestationObject,
            transports: req.attestation.transports,
          },
        },
        signedFromPb(req.signed),
      );
      return signedToPb(r, (m) => ({ authMethod: authMethodToPb(m) }));
    },

    async listCredentials(req) {
      return { authMethods: (await credentials.list(req.platformId, req.accountId)).map(authMethodToPb) };
    },

    async challengeCredential(req) {
      const r = await credentials.challenge(req.platformId, req.credentialId, req.clientPublicKey);
      return {
        authMethod: authMethodToPb(r.authMethod),
        ...('challenge' in r ? { challenge: r.challenge, requestId: r.requestId, expiresAt: r.expiresAt } : {}),
      };
    },

    async verifyCredential(req) {
      const s = await credentials.verify(req.platformId, req.credentialId, {
        type: typeFromPb(req.type),
        otp: req.otp,
        oidcToken: req.oidcToken,
        clientPublicKey: req.clientPublicKey,
        assertion: req.assertion,
        requestId: req.requestId || undefined,
      });
      return { session: sessionToPb(s, s.authMethod, s.encryptedSessionSigningKey) };
    },

    async updateCredential(req) {
      const r = await credentials.update(req.platformId, req.credentialId, req.email, signedFromPb(req.signed));
      return signedToPb(r, (m) => ({ authMethod: authMethodToPb(m) }));
    },

    async revokeCredential(req) {
      const r = await credentials.revoke(req.platformId, req.credentialId, signedFromPb(req.signed));
      return signedToPb(r, (m) => ({ authMethod: authMethodToPb(m) }));
    },

    async listSessions(req) {
      const active = await credentials.listSessions(req.platformId, req.accountId);
      return { sessions: active.map((a) => sessionToPb(a.session, a.authMethod)) };
    },

    async revokeSession(req) {
      const r = await credentials.revokeSession(req.platformId, req.sessionId, signedFromPb(req.signed));
      return signedToPb(r, (s) => ({ session: sessionToPb(s, undefined) }));
    },

    async refreshSession(req) {
      const r = await credentials.refreshSession(req.platformId, req.sessionId, req.clientPublicKey, signedFromPb(req.signed));
      return signedToPb(r, (s) => ({ session: sessionToPb(s, s.authMethod, s.encryptedSessionSigningKey) }));
    },

    async exportWallet(req) {
      const r = await credentials.exportWallet(req.platformId, req.accountId, req.clientPublicKey, signedFromPb(req.signed));
      return signedToPb(r, (bundle) => ({ encryptedWalletCredentials: bundle }));
    },

    async createSigningRequest(req) {
      const c = await signing.createSigningRequest(req.platformId, req.accountId, actionFromPb(req.action), req.bodyJson);
      return { signingChallenge: challengeToPb(c) };
    },

    async verifySignedRequest(req) {
      const v = await signing.verifySignedRequest(req.platformId, req.accountId, actionFromPb(req.action), signedFromPb(req.signed));
      return { ...(v.sessionId ? { sessionId: v.sessionId } : {}), ...(v.credentialId ? { credentialId: v.credentialId } : {}) };
    },
  };
}
