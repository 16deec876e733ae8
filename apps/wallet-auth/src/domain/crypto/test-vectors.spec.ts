import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/p256';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { decryptCredentialBundle, decryptExportBundle, verifyStampSignature } from '@turnkey/crypto';
import { decryptExport, decryptSessionBundle, stamp } from '@sluice/wallet-client';
import { encryptCredentialBundle } from './session-bundle.js';
import { createExportBundle, parseExportSigningKey } from './export-bundle.js';
import { bodyHash, buildPayloadToSign } from './signing-payload.js';
import { verifyStamp } from './stamp.js';

// The test vector published in docs/wallet-auth.md. Every value is deterministic:
// fixed keys, fixed HPKE ephemeral keys and RFC 6979 ECDSA nonces.
const V = {
  clientPrivateKey: '1111111111111111111111111111111111111111111111111111111111111111',
  clientPublicKey:
    '040217e617f0b6443928278f96999e69a23a4f2c152bdf6d6cdf66e5b80282d4ed194a7debcb97712d2dda3ca85aa8765a56f45fc758599652f2897c65306e5794',
  hpkeEphemeralPrivateKey: '2222222222222222222222222222222222222222222222222222222222222222',
  sessionPrivateKey: '3333333333333333333333333333333333333333333333333333333333333333',
  sessionPublicKey: '0351a7580833898ea1b183cbd7350a4099078c6ef1c1e18e970cd7683035f25e7d',
  credentialBundle:
    '2D3mR2shGSkgZjh1AX2hb1TuTjxbSMWX6Z7XT155tKcSznoPA4eZp4Z1eVGxZyfA1VCLbwcMFL8AmPHC1YSHBuj3Pw9iRDfVp2tcPwznnrFNCn8Q2cWm',
  accountId: 'InternalAccount:019542f5-b3e7-1d02-0000-000000000002',
  requestId: 'Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21',
  bodySha256: '0851cd6f41ae6d7c942905fc95d16f86ce36cf321670d3b7fe04d6108e23261b',
  payloadToSign:
    '{"accountId":"InternalAccount:019542f5-b3e7-1d02-0000-000000000002","action":"EXPORT_WALLET","bodySha256":"0851cd6f41ae6d7c942905fc95d16f86ce36cf321670d3b7fe04d6108e23261b","expiresAt":"2026-05-13T12:05:00.000Z","issuedAt":"2026-05-13T12:00:00.000Z","kind":"SLUICE_SIGNED_REQUEST_V1","requestId":"Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21"}',
  stamp:
    'eyJwdWJsaWNLZXkiOiIwMzUxYTc1ODA4MzM4OThlYTFiMTgzY2JkNzM1MGE0MDk5MDc4YzZlZjFjMWUxOGU5NzBjZDc2ODMwMzVmMjVlN2QiLCJzY2hlbWUiOiJTSUdOQVRVUkVfU0NIRU1FX1RLX0FQSV9QMjU2Iiwic2lnbmF0dXJlIjoiMzA0NTAyMjEwMGU0YjcyMzM5NDNjNzZlYzgwNGM5ZWVmYzMyMDY4OWY4NGMzNTU0ZmMxZTk2YmZhOTE1YzBmMjRiNGIzZTEyODQwMjIwMGY1NGFhYmZjYzkxNjM5YmE0YWNlNDQ4MTE4YTM1NjhlYmY3MDE5YjVlZDg4NGVmZDFmZmU0NDkyZDA0YzM5YSJ9',
  exportEphemeralPrivateKey: '4444444444444444444444444444444444444444444444444444444444444444',
  exportSigningPrivateKey: '5555555555555555555555555555555555555555555555555555555555555555',
  exportSigningPublicKey:
    '0457e977f6db7e33c3fe7acf2842ed987009caf56d458682fca447b7d3d762ab34c5ab3770ba573bdff5414065640ffb5b346dfa84dec4db4d68e5f59cc471c2ec',
  mnemonic:
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art',
  exportBundle:
    '{"version":"v1.0.0","data":"7b22656e6361707065645075626c6963223a2230343562333638393064616362643763396139366262373461316565323862336432643735623732653039613230656632356366386536666438613966303335306430653134626564386434363832613334643833353338626466663562393665383961363636366563306462353734356430326661313231303037326466373561222c2263697068657274657874223a2237656662373431613837653532306333613836313139376338666539663539613764353630666430303934613536303531396266613636343033343437356365376530396161363535376463313036323939653761613936376666393033353438376262333637616132306536356565613837343038656139363037653432646533623562303038643234333931303434636638643735383930643135333337326364643130643139363664363336653164343565303639643630333231373738383632393061313931663830333330363234363961346130303139613330613330626333383433333234376364616362303039643965626236323130633963323766646632363931656137313535366533326438346434396264313161393264323035336633626130393364663130313666663331363530343266333735303461333462643835353336636338306366373730366430343163363533613035663439353839336562656234373038386662316664376463363561373066336165623531616662626361323034323234303831356565222c226f7267616e697a6174696f6e4964223a22496e7465726e616c4163636f756e743a30313935343266352d623365372d316430322d303030302d303030303030303030303032227d","dataSignature":"3045022100b795733cdb23f3930f3bd595100f0fc03f16858580967dab2efb5cd4f8164d0102200a9f311f2e2ed192adfb073d460a195eada805d8a1172de287599ee160a3810d","enclaveQuorumPublic":"0457e977f6db7e33c3fe7acf2842ed987009caf56d458682fca447b7d3d762ab34c5ab3770ba573bdff5414065640ffb5b346dfa84dec4db4d68e5f59cc471c2ec"}',
};

describe('published test vector', () => {
  it('credential bundle: produced exactly, opened by Turnkey and by wallet-client', async () => {
    expect(bytesToHex(p256.getPublicKey(hexToBytes(V.clientPrivateKey), false))).toBe(V.clientPublicKey);
    const bundle = await encryptCredentialBundle(
      hexToBytes(V.sessionPrivateKey),
      hexToBytes(V.clientPublicKey),
      hexToBytes(V.hpkeEphemeralPrivateKey),
    );
    expect(bundle).toBe(V.credentialBundle);
    expect(decryptCredentialBundle(V.credentialBundle, V.clientPrivateKey)).toBe(V.sessionPrivateKey);
    expect(await decryptSessionBundle(V.credentialBundle, V.clientPrivateKey)).toBe(V.sessionPrivateKey);
    expect(bytesToHex(p256.getPublicKey(hexToBytes(V.sessionPrivateKey), true))).toBe(V.sessionPublicKey);
  });

  it('payloadToSign and stamp: produced exactly, verified by stamp.ts and Turnkey', async () => {
    const body = { clientPublicKey: V.clientPublicKey };
    expect(bodyHash(body)).toBe(V.bodySha256);
    const payload = buildPayloadToSign({
      requestId: V.requestId,
      action: 'EXPORT_WALLET',
      accountId: V.accountId,
      body,
      issuedAt: new Date('2026-05-13T12:00:00.000Z'),
      expiresAt: new Date('2026-05-13T12:05:00.000Z'),
    });
    expect(payload).toBe(V.payloadToSign);
    expect(stamp(V.payloadToSign, V.sessionPrivateKey)).toBe(V.stamp);
    expect(verifyStamp(V.stamp, V.payloadToSign).publicKey).toBe(V.sessionPublicKey);
    const { signature } = JSON.parse(Buffer.from(V.stamp, 'base64url').toString('utf8'));
    expect(await verifyStampSignature(V.sessionPublicKey, signature, V.payloadToSign)).toBe(true);
  });

  it('export bundle: produced exactly, opened by Turnkey decryptExportBundle and by wallet-client', async () => {
    const signingKey = parseExportSigningKey(V.exportSigningPrivateKey);
    expect(signingKey.publicKey).toBe(V.exportSigningPublicKey);
    const bundle = await createExportBundle({
      mnemonic: V.mnemonic,
      clientPublicKey: V.clientPublicKey,
      organizationId: V.accountId,
      environment: 'PRODUCTION',
      signingKey,
      ephemeralPrivateKey: hexToBytes(V.exportEphemeralPrivateKey),
    });
    expect(bundle).toBe(V.exportBundle);
    const viaTurnkey = await decryptExportBundle({
      exportBundle: V.exportBundle,
      embeddedKey: V.clientPrivateKey,
      organizationId: V.accountId,
      dangerouslyOverrideSignerPublicKey: V.exportSigningPublicKey,
      returnMnemonic: true,
    });
    expect(viaTurnkey).toBe(V.mnemonic);
    expect(
      await decryptExport(V.exportBundle, V.clientPrivateKey, {
        organizationId: V.accountId,
        signerPublicKey: V.exportSigningPublicKey,
      }),
    ).toBe(V.mnemonic);
  });
});
