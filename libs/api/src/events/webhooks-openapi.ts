import { Type, type TSchema } from '@sinclair/typebox';
import { Timestamp } from '../schema.js';
import { EVENT_CONTRACTS, type EventContract } from './catalogue.js';

/**
 * The OpenAPI `webhooks` section, generated from the event catalogue: one operation per group of
 * webhook types (named as the reference document names them), whose body is `{id, type, timestamp,
 * data}` with `type` one of the group's catalogue types and `data` the contract's schema (the public
 * resource). Request–response types document the answers the platform may give.
 */

/** The reference's webhook names per resource prefix of a type (`INCOMING_PAYMENT.PENDING` → incoming-payment). */
export const WEBHOOK_GROUPS: Readonly<Record<string, { name: string; summary: string }>> = {
  INCOMING_PAYMENT: { name: 'incoming-payment', summary: 'Incoming payment webhook and approval mechanism' },
  OUTGOING_PAYMENT: { name: 'outgoing-payment', summary: 'Outgoing payment status webhook' },
  INTERNAL_ACCOUNT: { name: 'internal-account-status', summary: 'Internal account status webhook' },
  CUSTOMER: { name: 'customer-update', summary: 'Customer update webhook' },
  VERIFICATION: { name: 'verification-update', summary: 'Verification update webhook' },
  AGENT_ACTION: { name: 'agent-action', summary: 'Agent action webhook' },
  BULK_UPLOAD: { name: 'bulk-upload', summary: 'Bulk upload webhook' },
  INVITATION: { name: 'invitation-claimed', summary: 'Invitation claimed webhook' },
};

/** The type of the test webhook (POST /sandbox/webhooks/test); the dispatcher makes it, no event does. */
export const TEST_WEBHOOK = 'TEST';

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'Webhook:<uuid>, the body `id`: the same on every attempt and redelivery (deduplicate on it)',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of the attempt (signed; refuse one too far from now)',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per valid secret (two during a rotation overlap). Verify with the standardwebhooks package: `new Webhook(secret).verify(rawBody, headers)`.',
    schema: { type: 'string' },
  },
];

const ANSWERS = {
  '200': { description: 'Any 2xx but 202: received; for INCOMING_PAYMENT.PENDING, the payment is approved' },
  '202': {
    description:
      'INCOMING_PAYMENT.PENDING only: the platform decides asynchronously with POST /transactions/{id}/approve or /reject within the approval window (5 s by default)',
  },
  '403': {
    description: 'INCOMING_PAYMENT.PENDING only: the payment is rejected (`reason` in the body, optional)',
  },
  '422': {
    description:
      'INCOMING_PAYMENT.PENDING only: more counterparty information is required (`requiredFields`); the sandbox sender has none to give, so the payment is rejected',
  },
  '410': {
    description:
      'Gone: the endpoint is disabled (WEBHOOK_ENDPOINT.DISABLED) until webhookEndpoint is set again',
  },
};

function body(types: string[], data: TSchema) {
  return Type.Object({
    id: Type.String({ description: 'Webhook:<uuid>, equal to the webhook-id header' }),
    type: Type.Union(
      types.map((t) => Type.Literal(t)),
      { description: 'the webhook type' },
    ),
    timestamp: Timestamp,
    data,
  });
}

/** The webhook contracts of the catalogue by group name (types without a known group under their prefix). */
function groups(): Map<string, { summary: string; contracts: EventContract[] }> {
  const out = new Map<string, { summary: string; contracts: EventContract[] }>();
  for (const c of EVENT_CONTRACTS.values()) {
    if (!c.webhook) continue;
    const prefix = c.type.split('.')[0]!;
    const g = WEBHOOK_GROUPS[prefix] ?? {
      name: prefix.toLowerCase().replace(/_/g, '-'),
      summary: `${prefix} webhook`,
    };
    const entry = out.get(g.name) ?? { summary: g.summary, contracts: [] };
    entry.contracts.push(c);
    out.set(g.name, entry);
  }
  return out;
}

/**
 * The `webhooks` object of the OpenAPI document: `{<name>: {post: operation}}`. Each request body is
 * a TypeBox schema; `normalize` turns it into the document's form (named schemas as `$ref`s).
 */
export function openApiWebhooks(normalize: (schema: TSchema) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const operation = (name: string, summary: string, contracts: EventContract[], data: TSchema) => {
    const answered = contracts.some((c) => c.answered);
    const description = [
      ...contracts.map((c) => `- \`${c.type}\`: ${c.description}`),
      '',
      'Signed per Standard Webhooks; delivered at least once (deduplicate on webhook-id), retried on the schedule immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (docs/webhooks.md).',
    ].join('\n');
    return {
      post: {
        summary,
        description,
        operationId: `${name.replace(/-([a-z])/g, (_m, ch: string) => ch.toUpperCase())}Webhook`,
        tags: ['Webhooks'],
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: normalize(
                body(
                  contracts.map((c) => c.type),
                  data,
                ),
              ),
            },
          },
        },
        responses: answered
          ? ANSWERS
          : { '200': { description: 'Any 2xx: received. Anything else is retried.' }, '410': ANSWERS['410'] },
      },
    };
  };
  for (const [name, g] of groups()) {
    // One group carries one resource: the data schema of its contracts.
    out[name] = operation(name, g.summary, g.contracts, g.contracts[0]!.data);
  }
  out['test-webhook'] = operation(
    'test-webhook',
    'Test webhook',
    [
      {
        type: TEST_WEBHOOK,
        owner: 'webhooks',
        data: Type.Object({}),
        webhook: true,
        description: 'POST /sandbox/webhooks/test: the endpoint answers, nothing else happens.',
      },
    ],
    Type.Object({}),
  );
  return out;
}
