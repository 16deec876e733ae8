/**
 * PIX (Brazil) static BR Code: the EMV "copia e cola" payload a payer pastes
 * into a banking app. Used by the sandbox payment instructions of BRL accounts
 * and quotes (the transaction id carries the reference that matches the payment).
 */

function emv(id: string, value: string): string {
  return id + String(value.length).padStart(2, '0') + value;
}

/** CRC16-CCITT (polynomial 0x1021, initial 0xFFFF) over the UTF-8 bytes, as the BR Code requires. */
export function crc16(s: string): number {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(s)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** A static PIX payload paying the pix `key`, with `txid` as the transaction id and a valid CRC. */
export function pixPayload(key: string, txid: string): string {
  const body =
    emv('00', '01') +
    emv('26', emv('00', 'br.gov.bcb.pix') + emv('01', key)) +
    emv('52', '0000') +
    emv('53', '986') +
    emv('58', 'BR') +
    emv('59', 'SLUICE SANDBOX') +
    emv('60', 'SAO PAULO') +
    emv('62', emv('05', txid)) +
    '6304';
  return body + crc16(body).toString(16).toUpperCase().padStart(4, '0');
}
