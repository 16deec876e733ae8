import { Type } from '@sinclair/typebox';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';

const TestWebhookResponse = Type.Object(
  {
    response_status: Type.Integer({ description: 'HTTP status code the webhook endpoint returned' }),
    url: Type.String({ format: 'uri', description: 'URL the webhook was sent to' }),
    response_body: Type.String({ description: 'body the endpoint returned (truncated to a few KiB)' }),
  },
  { $id: 'TestWebhookResponse', additionalProperties: false },
);

/**
 * `POST /sandbox/webhooks/test`: sends a signed `TEST` webhook
 * (`{id, type: "TEST", timestamp, data: {}}`) to the platform's configured
 * endpoint through the webhook-dispatcher and returns what the endpoint said.
 * Sandbox platforms only. No endpoint configured, or no HTTP answer (refused
 * target, timeout, network error) → 400 with WEBHOOK_ENDPOINT_NOT_SET /
 * WEBHOOK_DELIVERY_ERROR.
 */
const sandboxWebhooksRoutes: RouteModule = (app, deps) => {
  app.post(
    '/sandbox/webhooks/test',
    {
      schema: {
        tags: ['Sandbox'],
        operationId: 'sendTestWebhook',
        summary: 'Send a test webhook',
        description:
          'Takes no body. Sends a TEST webhook, signed like every webhook (webhook-id, webhook-timestamp, webhook-signature), to the configured endpoint and returns its response status, the URL and the response body.',
        response: { 200: TestWebhookResponse, ...errorResponses() },
      },
    },
    async (request) => {
      requireSandbox(request);
      const res = await deps.clients.webhooks.sendTestWebhook(
        { platformId: request.platform.id },
        { deadlineMs: 30_000 },
      );
      return { response_status: res.responseStatus, url: res.url, response_body: res.responseBody };
    },
  );
};

export default sandboxWebhooksRoutes;
