import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import type { CurrencyPreference, ReceiverLookup } from '../domain/receiver-lookup.js';
import type { PayerDataField, SandboxReceiverBehavior } from '../domain/uma.js';
import { openCounterpartyName, openUmaAddress, sealCounterpartyName, sealUmaAddress } from './sealing.js';
import { fromJson, insertRow } from './sql.js';

/** A row of `payments.receiver_lookups`. */
interface ReceiverLookupRow {
  id: string;
  platform_id: string;
  kind: 'UMA' | 'EXTERNAL_ACCOUNT';
  /** The UMA addresses sealed (store/sealing.ts) in `sealed_…`; the plaintext columns hold them only in rows written before. */
  receiver_uma_address: string | null;
  sealed_receiver_uma_address: string | null;
  external_account_id: string | null;
  sender_uma_address: string | null;
  sealed_sender_uma_address: string | null;
  customer_id: string | null;
  sending_currency: string;
  supported_currencies: StoredPreference[] | string;
  required_payer_data_fields: PayerDataField[] | string;
  sandbox_behavior: SandboxReceiverBehavior | null;
  /** Sealed (store/sealing.ts); `counterparty_name` holds the name in plain text only in rows written before. */
  sealed_counterparty_name: string | null;
  counterparty_name: string | null;
  created_at: Date | string;
  expires_at: Date | string;
}

/** Rates as exact ratios, amounts as decimal strings (jsonb has no bigint). */
interface StoredPreference {
  currency: string;
  rate: [string, string];
  min: string;
  max: string;
}

const JSONB = new Set(['supported_currencies', 'required_payer_data_fields']);

/** The one mapper of `payments.receiver_lookups`: ReceiverLookup ↔ ReceiverLookupRow (the name and the UMA addresses sealed under `keyring`). */
const receiverLookupRow = (keyring: MasterKeyring) => ({
  to(l: ReceiverLookup): ReceiverLookupRow {
    const prefs: StoredPreference[] = l.supportedCurrencies.map((p) => ({
      currency: p.currency,
      rate: [p.estimatedExchangeRate.num.toString(), p.estimatedExchangeRate.den.toString()],
      min: p.min.toString(),
      max: p.max.toString(),
    }));
    return {
      id: l.id,
      platform_id: l.platformId,
      kind: l.kind,
      receiver_uma_address: null,
      sealed_receiver_uma_address: sealUmaAddress(keyring, 'lookupReceiver', l.id, l.receiverUmaAddress),
      external_account_id: l.externalAccountId ?? null,
      sender_uma_address: null,
      sealed_sender_uma_address: sealUmaAddress(keyring, 'lookupSender', l.id, l.senderUmaAddress),
      customer_id: l.customerId ?? null,
      sending_currency: l.sendingCurrency,
      supported_currencies: JSON.stringify(prefs),
      required_payer_data_fields: JSON.stringify(l.requiredPayerDataFields),
      sandbox_behavior: l.sandboxBehavior ?? null,
      sealed_counterparty_name:
        l.counterpartyName !== undefined ? sealCounterpartyName(keyring, l.id, l.counterpartyName) : null,
      counterparty_name: null,
      created_at: l.createdAt,
      expires_at: l.expiresAt,
    };
  },

  from(r: ReceiverLookupRow): ReceiverLookup {
    const counterpartyName = r.sealed_counterparty_name
      ? openCounterpartyName(keyring, r.id, r.sealed_counterparty_name)
      : r.counterparty_name;
    const receiverUmaAddress = openUmaAddress(keyring, 'lookupReceiver', r.id, r.sealed_receiver_uma_address, r.receiver_uma_address);
    const senderUmaAddress = openUmaAddress(keyring, 'lookupSender', r.id, r.sealed_sender_uma_address, r.sender_uma_address);
    return {
      id: r.id,
      platformId: r.platform_id,
      kind: r.kind,
      ...(receiverUmaAddress ? { receiverUmaAddress } : {}),
      ...(r.external_account_id ? { externalAccountId: r.external_account_id } : {}),
      ...(senderUmaAddress ? { senderUmaAddress } : {}),
      ...(r.customer_id ? { customerId: r.customer_id } : {}),
      sendingCurrency: r.sending_currency,
      supportedCurrencies: fromJson(r.supported_currencies).map(
        (p): CurrencyPreference => ({
          currency: p.currency,
          estimatedExchangeRate: { num: BigInt(p.rate[0]), den: BigInt(p.rate[1]) },
          min: BigInt(p.min),
          max: BigInt(p.max),
        }),
      ),
      requiredPayerDataFields: fromJson(r.required_payer_data_fields),
      ...(r.sandbox_behavior ? { sandboxBehavior: r.sandbox_behavior } : {}),
      ...(counterpartyName ? { counterpartyName } : {}),
      createdAt: new Date(r.created_at),
      expiresAt: new Date(r.expires_at),
    };
  },
});

/** Receiver lookups in `payments.receiver_lookups`. */
export class ReceiverLookupRepository {
  private readonly rows: ReturnType<typeof receiverLookupRow>;

  constructor(keyring: MasterKeyring) {
    this.rows = receiverLookupRow(keyring);
  }

  async insert(em: EntityManager, l: ReceiverLookup): Promise<void> {
    await em.execute(...insertRow('receiver_lookups', this.rows.to(l), JSONB));
  }

  /** The platform's lookup, or undefined (also for another platform's id). */
  async find(em: EntityManager, platformId: string, id: string): Promise<ReceiverLookup | undefined> {
    const rows = await em.execute<ReceiverLookupRow[]>(
      `SELECT * FROM receiver_lookups WHERE id = ? AND platform_id = ?`,
      [id, platformId],
    );
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** Deletes lookups that expired before `before`; returns how many. */
  async purgeExpired(em: EntityManager, before: Date): Promise<number> {
    const rows = await em.execute<{ id: string }[]>(`DELETE FROM receiver_lookups WHERE expires_at < ? RETURNING id`, [
      before,
    ]);
    return rows.length;
  }
}
