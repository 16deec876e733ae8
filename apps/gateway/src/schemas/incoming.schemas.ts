import { Type } from '@sinclair/typebox';
import { Id, Memo, PositiveAmount, UmaAddress } from '@sluice/api';
import { FreeFormObject, named } from './common.js';

/** POST /sandbox/uma/receive (reference SandboxUmaReceiveRequest; the receiver by UMA address or customerId). */
export const SandboxUmaReceiveRequest = named('SandboxUmaReceiveRequest', Type.Object(
  {
    senderUmaAddress: UmaAddress(
      'UMA address of the (simulated) sender, e.g. $success.usd@sandbox.sluice.local',
    ),
    receiverUmaAddress: Type.Optional(
      UmaAddress('UMA address of the platform customer who receives the payment (or give customerId)'),
    ),
    customerId: Type.Optional(Id('Customer')),
    receivingCurrencyCode: Type.String({
      pattern: '^[A-Z0-9]{3,5}$',
      description: 'currency credited; the receiver needs an internal account in it',
    }),
    receivingCurrencyAmount: PositiveAmount('amount received, in the smallest unit of the currency'),
  },
  { additionalProperties: false },
));

/** POST /transactions/{transactionId}/approve (reference ApprovePaymentRequest). */
export const ApprovePaymentRequest = named('ApprovePaymentRequest', Type.Object(
  {
    receiverCustomerInfo: Type.Optional(
      FreeFormObject('information about the recipient the sender asked for (kept with the decision)'),
    ),
  },
  { additionalProperties: false },
));

/** POST /transactions/{transactionId}/reject (reference RejectPaymentRequest). */
export const RejectPaymentRequest = named('RejectPaymentRequest', Type.Object(
  { reason: Type.Optional(Memo('why the platform rejects it (for its own records)')) },
  { additionalProperties: false },
));
