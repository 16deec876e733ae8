import { walletAuth as pb } from '@sluice/contracts';
import { invalidInput } from '@sluice/core';
import type { AsyncService } from '@sluice/rpc';
import { SIGNED_ACTIONS, type SignedAction } from '../domain/crypto/index.js';
import type { AuthMethodRecord, AuthMethodType, SessionRecord, Signed, SignedRetryInput, SigningChallengeOut } from '../domain/model.js';
import { requireAccountId, type CredentialsService } from '../app/credentials.service.js';
import type { SigningService } from '../app/signing.service.js';
import type { PlatformDirectory } from './platform.directory.js';

const TYPES: Record<string, AuthMethodType> = {
  [pb.AuthMethodType.OAUTH]: 'OAUTH',
  [pb.AuthMethodType.EMAIL_OTP]: 'EMAIL_OTP',
  [pb.AuthMethodType.PASSKEY]: 'PASSKEY',
};

function typeFromPb(t: pb.AuthMethodType): AuthMethodType {
  const v = TYPES[t];
  if (!v) throw invalidInput([{ field: 'type', message: 'must be OAUTH, EMAIL_OTP or PASSKEY' }]);
  return v;
}

function actionFromPb(a: pb.SignedAction): SignedAction {
  const name = String(a).replace(/^SIGNED_ACTION_/, '');
  if (!(SIGNED_ACTIONS as readonly string[]).includes(name)) throw invalidInput([{ field: 'action', message: `must be one of ${SIGNED_ACTIONS.join(', ')}` }]);
  return name as SignedAction;
}

function retryFromPb(s: pb.SignedRetry | undefined): SignedRetryInput {
  let body: unknown = {};
  const json = s?.bodyJson ?? '';
  if (json !== '') {
    try {
      body = JSON.parse(json);
    } catch {
      throw invalidInput([{ field: 'body', message: 'is not valid JSON' }]);
    }
  }
  return { body, signature: s?.signature || undefined, requestId: s?.requestId || undefined };
}

export function authMethodToPb(m: AuthMethodRecord): pb.AuthMethod {
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
  return { payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: c.expiresAt };
}

function signedOut<T, K extends string>(r: Signed<T>, key: K, map: (t: T) => unknown) {
  return r.challenge ? { signingChallenge: challengeToPb(r.challenge) } : ({ [key]: map(r.done as T) } as Record<K, never>);
}

/** gRPC handlers of WalletAuthService: translate proto <-> application calls. */
export function walletAuthHandlers(deps: {
  platforms: PlatformDirectory;
  credentials: CredentialsService;
  signing: SigningService;
  repoTx: <T>(fn: (tx: never) => Promise<T>) => Promise<T>;
}): AsyncService<pb.WalletAuthServiceServer> {
  const { platforms, credentials, signing } = deps;
  return {
    async createCredential(req) {
      const platform = await platforms.get(req.platformId);
      const r = await credentials.create(
        platform,
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
        retryFromPb(req.signed),
      );
      return signedOut(r, 'authMethod', authMethodToPb);
    },

    async listCredentials(req) {
      return { authMethods: (await credentials.list(req.platformId, req.accountId)).map(authMethodToPb) };
    },

    async challengeCredential(req) {
      const platform = await platforms.get(req.platformId);
      const r = await credentials.challenge(platform, req.credentialId, req.clientPublicKey);
      return {
        authMethod: authMethodToPb(r.authMethod),
        ...('challenge' in r ? { challenge: r.challenge, requestId: r.requestId, expiresAt: r.expiresAt } : {}),
      };
    },

    async verifyCredential(req) {
      const platform = await platforms.get(req.platformId);
      const s = await credentials.verify(platform, req.credentialId, {
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
      const platform = await platforms.get(req.platformId);
      return signedOut(await credentials.update(platform, req.credentialId, req.email, retryFromPb(req.signed)), 'authMethod', authMethodToPb);
    },

    async revokeCredential(req) {
      const platform = await platforms.get(req.platformId);
      return signedOut(await credentials.revoke(platform, req.credentialId, retryFromPb(req.signed)), 'authMethod', authMethodToPb);
    },

    async listSessions(req) {
      const sessions = await credentials.listSessions(req.platformId, req.accountId);
      const methods = new Map((await credentials.list(req.platformId, req.accountId)).map((m) => [m.id, m]));
      return { sessions: sessions.filter((s) => methods.has(s.authMethodId)).map((s) => sessionToPb(s, methods.get(s.authMethodId))) };
    },

    async revokeSession(req) {
      const platform = await platforms.get(req.platformId);
      return signedOut(await credentials.revokeSession(platform, req.sessionId, retryFromPb(req.signed)), 'session', (s) => sessionToPb(s, undefined));
    },

    async exportWallet(req) {
      const platform = await platforms.get(req.platformId);
      const r = await credentials.exportWallet(platform, req.accountId, req.clientPublicKey, retryFromPb(req.signed));
      return r.challenge ? { signingChallenge: challengeToPb(r.challenge) } : { encryptedWalletCredentials: r.done };
    },

    async createSigningRequest(req) {
      await platforms.get(req.platformId);
      const accountId = requireAccountId(req.accountId);
      const c = await signing.requestSignature(req.platformId, accountId, actionFromPb(req.action), retryFromPb({ bodyJson: req.bodyJson }).body);
      return { signingChallenge: challengeToPb(c) };
    },

    async verifySignedRequest(req) {
      const platform = await platforms.get(req.platformId);
      const accountId = requireAccountId(req.accountId);
      const action = actionFromPb(req.action);
      const retry = retryFromPb(req.signed);
      const v = await deps.repoTx((tx) => signing.verifySignedRetry(tx, platform, accountId, action, retry));
      return { ...(v.sessionId ? { sessionId: v.sessionId } : {}), ...(v.credentialId ? { credentialId: v.credentialId } : {}) };
    },
  };
}
