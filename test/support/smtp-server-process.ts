// A real SMTP server, run as a process of its own by test/support/smtp.ts: the npm package
// `smtp-server` on loopback, plain SMTP (no STARTTLS), with a login when SMTP_USER is set.
// It prints one JSON line when it listens ({"listening": port}) and one per message it
// accepts ({"mail": {"envelopeFrom", "envelopeTo", "user", "raw" (base64)}}); the test parses
// the raw message. A recipient whose address starts with `rejected@` is refused for good (550).
import { SMTPServer } from 'smtp-server';

const port = Number(process.env.SMTP_PORT ?? '0');
const user = process.env.SMTP_USER;
const pass = process.env.SMTP_PASS;
const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);

const server = new SMTPServer({
  logger: false,
  disabledCommands: ['STARTTLS'],
  authOptional: user === undefined,
  allowInsecureAuth: true,
  onAuth(auth, _session, callback) {
    if (auth.username === user && auth.password === pass) callback(null, { user: auth.username });
    else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
  },
  onRcptTo(address, _session, callback) {
    if (address.address.startsWith('rejected@')) callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
    else callback();
  },
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      print({
        mail: {
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
          envelopeTo: session.envelope.rcptTo.map((to) => to.address),
          user: session.user ?? null,
          raw: Buffer.concat(chunks).toString('base64'),
        },
      });
      callback();
    });
  },
});

server.listen(port, '127.0.0.1', () => {
  const address = server.server.address();
  print({ listening: typeof address === 'object' && address ? address.port : port });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
