import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '@sluice/logging';
import type { OtpMailer } from '../app/ports.js';

/**
 * SMTP delivery through nodemailer (`SMTP_URL`, e.g. `smtps://user:pass@host:465`). Without
 * SMTP_URL, local runs capture messages with a JSON transport (logged at debug level); a
 * production process (NODE_ENV=production) refuses to send instead, so a code is never
 * written to a log there. A failed send rejects; the caller reports OTP_DELIVERY_FAILED.
 */
export function createOtpMailer(
  smtpUrl: string | undefined,
  from: string,
  logger: Logger,
  opts: { production?: boolean } = {},
): OtpMailer & { close(): void } {
  const transport: Transporter = smtpUrl ? nodemailer.createTransport(smtpUrl) : nodemailer.createTransport({ jsonTransport: true });
  return {
    async send(to, code, appName, ttlMinutes) {
      if (!smtpUrl && opts.production) throw new Error('One-time passwords cannot be emailed: SMTP_URL is not configured');
      const app = appName ?? 'your wallet';
      const info = await transport.sendMail({
        from,
        to,
        subject: `Your ${app} verification code`,
        text: `Your ${app} verification code is ${code}. It expires in ${ttlMinutes} minutes. If you did not ask for it, ignore this email.`,
      });
      if (!smtpUrl) logger.debug({ captured: info.message }, 'OTP email captured (no SMTP_URL)');
    },
    close: () => transport.close(),
  };
}
