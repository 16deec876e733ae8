import { Type, type Static } from '@sinclair/typebox';

const MAX_AMOUNT = 9_000_000_000_000_000;

/** POST /sandbox/uma/receive (reference SandboxUmaReceiveRequest; the receiver is found by UMA address). */
export const SandboxUmaReceiveRequest = Type.Object(
  {
    senderUmaAddress: Type.String({
      minLength: 1,
      maxLength: 320,
      description: 'UMA address of the (simulated) sender, e.g. $success.usd@sandbox.sluice.local',
    }),
    receiverUmaAddress: Type.String({
      minLength: 1,
      maxLength: 320,
      description: 'UMA address of the platform customer who receives the payment',
    }),
    receivingCurrencyCode: Type.String({
      pattern: '^[A-Z0-9]{3,5}$',
      description: 'currency credited; the receiver needs an internal account in it',
    }),
    receivingCurrencyAmount: Type.Integer({
      minimum: 1,
      maximum: MAX_AMOUNT,
      description: 'amount received, in the smallest unit of the currency',
    }),
  },
  { additionalProperties: false },
);
export type SandboxUmaReceiveRequest = Static<typeof SandboxUmaReceiveRequest>;

/** POST /transactions/{transactionId}/approve (reference ApprovePaymentRequest). */
export const ApprovePaymentRequest = Type.Object(
  {
    receiverCustomerInfo: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'information about the recipient the sender asked for (kept with the decision)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ApprovePaymentRequest = Static<typeof ApprovePaymentRequest>;

/** POST /transactions/{transactionId}/reject (reference RejectPaymentRequest). */
export const RejectPaymentRequest = Type.Object(
  {
    reason: Type.Optional(
      Type.String({ maxLength: 1000, description: 'why the platform rejects it (for its own records)' }),
    ),
  },
  { additionalProperties: false },
);
export type RejectPaymentRequest = Static<typeof RejectPaymentRequest>;
