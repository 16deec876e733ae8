import { describe, expect, it } from 'vitest';
import { parseBasic } from './auth.hook.js';

const id = 'Token:01929f4e-3c7a-7b1c-9d2e-123456789abc';
const b64 = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

describe('parseBasic', () => {
  it('splits `Token:<uuid>:<secret>` after the token id (the id has a colon itself)', () => {
    expect(parseBasic(b64(`${id}:sk_live:with:colons`))).toEqual({
      tokenId: id,
      secret: 'sk_live:with:colons',
    });
    expect(parseBasic(`basic   ${Buffer.from(`${id}:s`).toString('base64')}`)).toEqual({
      tokenId: id,
      secret: 's',
    });
  });

  it('rejects anything else', () => {
    for (const h of [
      undefined,
      '',
      'Basic',
      'Bearer x',
      'Basic ***',
      b64(`${id}:`),
      b64(id),
      b64('Customer:01929f4e-3c7a-7b1c-9d2e-123456789abc:s'),
      b64(`${id}:${'s'.repeat(1025)}`),
    ]) {
      expect(parseBasic(h)).toBeUndefined();
    }
  });
});
