import { randomBytes } from 'node:crypto';
import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { base64url } from '@scure/base';
import { concat } from '../../src/domain/crypto/hpke.js';

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, n: number): number[] {
  if (n < 24) return [(major << 5) | n];
  if (n < 256) return [(major << 5) | 24, n];
  if (n < 65536) return [(major << 5) | 25, n >> 8, n & 255];
  return [(major << 5) | 26, (n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** Minimal CBOR encoder (ints, text, bytes, maps) for attestation objects and COSE keys. */
export function cbor(v: Cbor): Uint8Array {
  const out: number[] = [];
  const enc = (x: Cbor): void => {
    if (typeof x === 'number') out.push(...(x >= 0 ? head(0, x) : head(1, -1 - x)));
    else if (typeof x === 'string') {
      const b = new TextEncoder().encode(x);
      out.push(...head(3, b.length), ...b);
    } else if (x instanceof Uint8Array) out.push(...head(2, x.length), ...x);
    else {
      const entries = x instanceof Map ? [...x.entries()] : Object.entries(x);
      out.push(...head(5, entries.length));
      for (const [k, val] of entries) {
        enc(k);
        enc(val);
      }
    }
  };
  enc(v);
  return new Uint8Array(out);
}

const b64u = (b: Uint8Array) => base64url.encode(b).replace(/=+$/, '');
const u32 = (n: number) => new Uint8Array([(n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255]);

/** A software WebAuthn authenticator: 'none' attestation, ES256 assertions, a signature counter. */
export class SoftAuthenticator {
  readonly privateKey = p256.utils.randomPrivateKey();
  readonly credentialId = new Uint8Array(randomBytes(16));
  counter = 0;

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {}

  get credentialIdB64(): string {
    return b64u(this.credentialId);
  }

  private clientData(type: string, challenge: string): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() → the `attestation` body of POST /auth/credentials. */
  register(challenge: string) {
    const pub = p256.getPublicKey(this.privateKey, false);
    const cose = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, pub.slice(1, 33)], [-3, pub.slice(33)]]));
    const authData = concat(
      sha256(new TextEncoder().encode(this.rpId)),
      new Uint8Array([0x45]),
      u32(this.counter),
      new Uint8Array(16),
      new Uint8Array([0, this.credentialId.length]),
      this.credentialId,
      cose,
    );
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    return {
      credentialId: this.credentialIdB64,
      clientDataJson: b64u(this.clientData('webauthn.create', challenge)),
      attestationObject: b64u(attestationObject),
      transports: ['internal'],
    };
  }

  /** navigator.credentials.get() → the `assertion` body of /verify. */
  assert(challenge: string, opts: { counter?: number; origin?: string } = {}) {
    this.counter = opts.counter ?? this.counter + 1;
    const clientData = opts.origin
      ? new TextEncoder().encode(JSON.stringify({ type: 'webauthn.get', challenge, origin: opts.origin }))
      : this.clientData('webauthn.get', challenge);
    const authData = concat(sha256(new TextEncoder().encode(this.rpId)), new Uint8Array([0x05]), u32(this.counter));
    const sig = p256.sign(sha256(concat(authData, sha256(clientData))), this.privateKey).toDERRawBytes();
    return {
      credentialId: this.credentialIdB64,
      clientDataJson: b64u(clientData),
      authenticatorData: b64u(authData),
      signature: b64u(sig),
    };
  }
}
