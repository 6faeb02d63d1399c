// The one SMTP client (nodemailer), made from SMTP_URL: `smtp://` (upgraded with STARTTLS
// when the server offers it) or `smtps://`, credentials in the URL.
import { createTransport } from 'nodemailer';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  /** The same for every attempt at one notice, so that a mail sent twice reads as one. */
  messageId: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Why a send failed, in words that hold neither an address nor a credential: the client's codes and the server's reply code. */
export interface MailFailure {
  reason: string;
  /** The server refused this mail for good (a 5xx reply but 503, other than to the login): another attempt would get the same. */
  permanent: boolean;
}

export function createMailer(smtpUrl: string): Mailer {
  const transport = createTransport({
    url: smtpUrl,
    // Well below the activity's 2 minutes: a silent server fails the attempt, which is retried.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(mail) {
      await transport.sendMail(mail);
    },
    close: () => transport.close(),
  };
}

/** A send's error as a MailFailure; its message, which may quote an address, is left out. */
export function mailFailureOf(error: unknown): MailFailure {
  const { code, originalCode, responseCode, permanent } = (error ?? {}) as Record<string, unknown>;
  const reason = [
    typeof code === 'string' ? code : 'unknown error',
    typeof originalCode === 'string' ? `(${originalCode})` : '',
    typeof responseCode === 'number' ? String(responseCode) : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { reason, permanent: permanent === true && code !== 'EAUTH' };
}
