import { describe, expect, it } from 'vitest';
import {
  checkAbaRoutingNumber,
  checkBic,
  checkBrTaxId,
  checkClabe,
  checkCnpj,
  checkDigits,
  checkField,
  checkPhone,
  checkVpa,
  normalizeField,
  BBAN_FORMATS,
  IBAN_LENGTHS,
  checkCpf,
  checkEmail,
  checkIban,
  checkPixKey,
  checkSortCode,
  checkUkAccountNumber,
  checkUsAccountNumber,
  normalizeIban,
} from './bank-identifiers.js';
// The wallet and Lightning grammars are @sluice/core's, shared with payments (crypto withdrawals).
import {
  checkBolt11,
  checkBolt12,
  checkEvmAddress,
  checkLightningAddress,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
} from '@sluice/core';

const ok = (reason: string | undefined) => expect(reason).toBeUndefined();
/** The exact reasons a refusal gives (a check that refuses for the wrong reason must fail here). */
const BR_PHONE = 'must be a Brazilian phone number in E.164 form (+55, area code, 8 or 9 digits)';
const SOLANA = 'must be a base58 Solana address (32 to 44 characters)';
const SPARK = 'must be a Spark address (spark1...)';
const BOLT11 = 'must be a BOLT11 invoice (lnbc...)';
const LIGHTNING = 'must be a lightning address (user@domain, lower case)';

describe('ABA routing number', () => {
  it.each(['021000021', '011000015', '110000000', '121000358', '322271627'])('accepts %s', (v) =>
    ok(checkAbaRoutingNumber(v)),
  );
  it.each([
    ['021000022', 'checksum does not match'],
    ['123456789', 'checksum does not match'],
    ['02100002', 'must be 9 digits'],
    ['02100002a', 'must be 9 digits'],
    ['500000005', 'is not a valid routing number prefix'],
  ])('refuses %s', (v, reason) => expect(checkAbaRoutingNumber(v)).toBe(reason));
});

describe('US account number', () => {
  it('takes 4 to 17 digits', () => {
    ok(checkUsAccountNumber('1234'));
    ok(checkUsAccountNumber('12345678901234567'));
    expect(checkUsAccountNumber('123')).toBe('must be 4 to 17 digits');
    expect(checkUsAccountNumber('123456789012345678')).toBe('must be 4 to 17 digits');
    expect(checkUsAccountNumber('12-3456')).toBe('must be 4 to 17 digits');
  });
});

describe('IBAN', () => {
  it.each([
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'ES9121000418450200051332',
  ])('accepts %s', (v) => ok(checkIban(v)));
  it('normalizes spaces and case', () =>
    expect(normalizeIban('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000'));
  it.each([
    ['DE89370400440532013001', 'checksum does not match'],
    ['DE88370400440532013000', 'checksum does not match'],
    ['DE8937040044053201300', 'must be 22 characters for DE'],
    ['US89370400440532013000', 'country US is not supported for EUR accounts'],
    ['DE89-3704', 'must be 2 letters, 2 check digits and 11 to 30 letters or digits'],
  ])('refuses %s', (v, reason) => expect(checkIban(v)).toBe(reason));
});

describe('IBAN national formats (ISO 13616 registry)', () => {
  it('a BBAN format for every IBAN country, of the IBAN length less 4', () => {
    expect(Object.keys(BBAN_FORMATS).sort()).toEqual(Object.keys(IBAN_LENGTHS).sort());
    for (const [country, format] of Object.entries(BBAN_FORMATS)) {
      const widths = [...format.source.matchAll(/\{(\d+)\}/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(widths + 4, country).toBe(IBAN_LENGTHS[country]);
    }
  });
  it.each([
    'BE68539007547034',
    'IT60X0542811101000000123456',
    'AT611904300234573201',
    'CH9300762011623852957',
    'PL61109010140000071219812874',
    'PT50000201231234567890154',
    'SE4550000000058398257466',
    'FI2112345600000785',
    'IE29AIBK93115212345678',
    'NO9386011117947',
    'LU280019400644750000',
  ])('accepts the registry example %s', (v) => ok(checkIban(v)));
  it.each([
    ['NL91ABNA041716430X', 'is not in the IBAN format of NL'],
    ['DE8937040044053201300A', 'is not in the IBAN format of DE'],
    ['IT601054281110100000012345A', 'is not in the IBAN format of IT'],
  ])('refuses %s (%s)', (v, reason) => expect(checkIban(v)).toBe(reason));
});

describe('IBAN of one country (DKK, AED, EGP, PKR variants)', () => {
  it.each([
    ['DK5000400440116243', 'DK'],
    ['AE070331234567890123456', 'AE'],
    ['EG380019000500000000263180002', 'EG'],
    ['PK36SCBL0000001123456702', 'PK'],
  ])('accepts %s for %s', (v, c) => ok(checkIban(v, [c])));
  it.each([
    ['DE89370400440532013000', 'DK', 'must be an IBAN of DK, not DE'],
    ['DK5000400440116244', 'DK', 'checksum does not match'],
    ['AE07033123456789012345', 'AE', 'must be 23 characters for AE'],
    ['PK36SC1L0000001123456702', 'PK', 'is not in the IBAN format of PK'],
  ])('refuses %s for %s', (v, c, reason) => expect(checkIban(v, [c])).toBe(reason));
});

describe('digits, phone numbers, UPI addresses', () => {
  it('digits: exact or a range', () => {
    ok(checkDigits('001', 3, 3));
    expect(checkDigits('01', 3, 3)).toBe('must be 3 digits');
    expect(checkDigits('12345a7', 7, 12)).toBe('must be 7 to 12 digits');
  });
  it.each([
    ['+254712345678', ['KE']],
    ['+22997123456', ['BJ']],
    ['+2290197123456', ['BJ']],
    ['+2250712345678', ['BJ', 'CI', 'SN', 'TG']],
    ['+6281234567890', ['ID']],
    ['+573001234567', ['CO']],
  ])('phone %s of %o', (v, countries) => ok(checkPhone(v, countries)));
  it.each([
    ['+255712345678', ['KE'], 'must be a phone number of KE (+254)'],
    ['+2547123456789', ['KE'], 'must have 9 digits after +254 (KE)'],
    ['254712345678', ['KE'], 'must be a phone number in E.164 form (+254 and the number)'],
    ['+233241234567', ['CM', 'CG'], 'must be a phone number of CM or CG (+237 or +242)'],
  ])('refuses phone %s of %o', (v, countries, reason) => expect(checkPhone(v, countries)).toBe(reason));
  it('UPI', () => {
    ok(checkVpa('ada.lovelace@okaxis'));
    ok(checkVpa('user_1-2@upi'));
    for (const v of ['ada', '@upi', 'ada@ok.axis', 'a@b@c'])
      expect(checkVpa(v), v).toBe('must be a UPI address (handle@psp)');
  });
  it('normalizes by format before checking', () => {
    expect(normalizeField({ kind: 'phone', countries: ['KE'] }, '+254 (712) 345-678')).toBe('+254712345678');
    expect(normalizeField({ kind: 'digits', min: 6, max: 6 }, '04-00 75')).toBe('040075');
    expect(normalizeField({ kind: 'bic' }, 'cobade ff')).toBe('COBADEFF');
    expect(normalizeField({ kind: 'vpa' }, 'Ada@OKAXIS')).toBe('ada@okaxis');
    expect(checkField({ kind: 'enum', values: ['BJ', 'CI'] }, 'GH')).toBe('must be one of BJ, CI');
    expect(checkField({ kind: 'text', max: 3 }, 'abcd')).toBe('must be at most 3 characters');
  });
});

describe('BIC', () => {
  it('the country of the account', () => {
    ok(checkBic('HSBCHKHHHKH', 'HK'));
    expect(checkBic('DBSSSGSG', 'HK')).toBe('country SG does not match the account country HK');
  });
  it('accepts 8 and 11 characters', () => {
    ok(checkBic('DEUTDEFF'));
    ok(checkBic('DEUTDEFF500'));
  });
  it.each(['DEUT1EFF', 'DEUTDEF', 'DEUTDEFF50', 'deutdeff'])('refuses %s', (v) =>
    expect(checkBic(v)).toBe('must be a BIC of 8 or 11 characters (e.g. DEUTDEFF or DEUTDEFF500)'),
  );
});

describe('CLABE', () => {
  it.each(['032180000118359719', '002180000118359105'])('accepts %s', (v) => ok(checkClabe(v)));
  it('refuses a wrong check digit and wrong lengths', () => {
    expect(checkClabe('032180000118359718')).toBe('check digit does not match');
    expect(checkClabe('03218000011835971')).toBe('must be 18 digits');
    expect(checkClabe('0321800001183597190')).toBe('must be 18 digits');
  });
});

describe('CPF / CNPJ', () => {
  it('accepts valid numbers', () => {
    ok(checkCpf('52998224725'));
    ok(checkCpf('11144477735'));
    ok(checkCnpj('11222333000181'));
    ok(checkBrTaxId('52998224725'));
    ok(checkBrTaxId('11222333000181'));
  });
  it('refuses wrong check digits, repeated digits and lengths', () => {
    expect(checkCpf('52998224726')).toBe('CPF check digits do not match');
    expect(checkCpf('11111111111')).toBe('is not a valid CPF');
    expect(checkCnpj('11222333000182')).toBe('CNPJ check digits do not match');
    expect(checkCnpj('00000000000000')).toBe('is not a valid CNPJ');
    expect(checkBrTaxId('123456789012')).toBe('must be a CPF (11 digits) or CNPJ (14 digits)');
  });
});

describe('PIX keys', () => {
  it('validates each key type', () => {
    ok(checkPixKey('CPF', '52998224725'));
    expect(checkPixKey('CPF', '52998224726')).toBe('CPF check digits do not match');
    ok(checkPixKey('CNPJ', '11222333000181'));
    expect(checkPixKey('CNPJ', '52998224725')).toBe('must be a CNPJ of 14 digits');
    ok(checkPixKey('EMAIL', 'maria.silva@example.com.br'));
    expect(checkPixKey('EMAIL', 'maria.silva')).toBe('must be an e-mail address');
    expect(checkPixKey('EMAIL', `${'a'.repeat(71)}@ex.com`)).toBe('must be at most 77 characters');
    ok(checkPixKey('PHONE', '+5511987654321'));
    ok(checkPixKey('PHONE', '+551133334444'));
    expect(checkPixKey('PHONE', '+15551234567')).toBe(BR_PHONE);
    expect(checkPixKey('PHONE', '11987654321')).toBe(BR_PHONE);
    ok(checkPixKey('RANDOM', '123e4567-e89b-12d3-a456-426614174000'));
    expect(checkPixKey('RANDOM', '123e4567e89b12d3a456426614174000')).toBe('must be a random key (EVP UUID)');
  });
  it('e-mail', () => {
    ok(checkEmail('a@b.co'));
    expect(checkEmail('a@b')).toBe('must be an e-mail address');
  });
});

describe('UK sort code and account number', () => {
  it('needs 6 and 8 digits', () => {
    ok(checkSortCode('040075'));
    expect(checkSortCode('04007')).toBe('must be 6 digits');
    ok(checkUkAccountNumber('57443718'));
    expect(checkUkAccountNumber('5744371')).toBe('must be 8 digits');
    expect(checkUkAccountNumber('5744371a')).toBe('must be 8 digits');
  });
});

describe('wallet addresses', () => {
  it('Solana and Tron are base58 of the right length', () => {
    ok(checkSolanaAddress('4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg'));
    expect(checkSolanaAddress('0Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg')).toBe(SOLANA);
    expect(checkSolanaAddress('4Nd1m6Qkq7')).toBe(SOLANA);
    ok(checkTronAddress('TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o'));
    expect(checkTronAddress('XBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o')).toBe(
      'must be a base58 Tron address (34 characters starting with T)',
    );
  });
  it('EVM addresses: hex, EIP-55 checksum when mixed case', () => {
    ok(checkEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'));
    ok(checkEvmAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'));
    ok(checkEvmAddress('0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED'));
    expect(checkEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(
      'EIP-55 checksum does not match',
    );
    expect(checkEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA')).toBe(
      'must be 0x followed by 40 hexadecimal digits',
    );
  });
  it('Spark addresses', () => {
    ok(checkSparkAddress('spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu'));
    ok(checkSparkAddress('sparkrt1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6m102'));
    expect(checkSparkAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).toBe(SPARK);
    expect(checkSparkAddress('spark1ABC')).toBe(SPARK);
  });
  it('Lightning: BOLT11, BOLT12, lightning address', () => {
    ok(checkBolt11('lnbc15u1p3xnhl2pp5jptserfk3zk4qy42tlucycrfwxhydvlemu9pqr93tuzlv9cc7g3s'));
    expect(checkBolt11('LNBC15U1P3XNHL2PP5JPTSERFK3ZK4QY42TLUCYCRFWXHYDVLEMU')).toBe(BOLT11);
    expect(checkBolt11('bitcoin:bc1q')).toBe(BOLT11);
    ok(checkBolt12('lno1pgqpvggr53478rgx3s4uttelcy76ssrepm2q'));
    expect(checkBolt12('lnbc1pgqpvggr53478rgx3s4uttelcy76ssrepm2q')).toBe('must be a BOLT12 offer (lno1...)');
    ok(checkLightningAddress('john.doe@lightningwallet.com'));
    expect(checkLightningAddress('john doe@lightningwallet.com')).toBe(LIGHTNING);
    expect(checkLightningAddress('john@localhost')).toBe(LIGHTNING);
  });
});
