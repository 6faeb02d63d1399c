// `svc-webhooks listen --forward-to URL`: opens a relay session and forwards each delivery it
// hands over, byte for byte with its headers, to a server on this machine; the local answer
// goes back and is the delivery's outcome in the log (docs/receiving.md). Only this process
// dials the local URL: the service never learns it.
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import WebSocket from 'ws';
import { KEPT_BODY_BYTES, captureResponse } from '../delivery/response-capture';
import { classifyError, readAtMost } from '../delivery/sender';
import type { RelayAnswerMessage, ServiceMessage } from '../relay/protocol';
import { CLOSE } from '../relay/protocol';
import type { ApiSchemas } from '../client';
import { ApiFailure, UsageError, flag, list, must, type CommandContext } from './context';

type Topic = ApiSchemas['Webhook']['events'][number];

/** How long the local server has to answer; the service's own deadline ends the delivery sooner. */
const LOCAL_TIMEOUT_MS = 30_000;
/** How long a lost connection is retried: the service keeps the session this long. */
const RECONNECT_FOR_MS = 60_000;
const RECONNECT_EVERY_MS = 1000;

/** Why a connection ended: the user stopped, the session is gone or taken over, or the connection was lost. */
type Ending = 'stopped' | 'gone' | 'replaced' | 'lost';

export async function listen(ctx: CommandContext): Promise<void> {
  const forwardTo = localUrl(flag(ctx, 'forward-to'));
  const body = { events: list(flag(ctx, 'events')) as Topic[] | undefined, listIds: list(flag(ctx, 'list')) };

  let session = await openSession();
  let lostSince: number | null = null;
  for (;;) {
    const ticket = await ctx.client.POST('/v3/webhooks/{id}/relay-connections', { params: { path: { id: session.id } } });
    if (ticket.response.status === 404) {
      // Closed too long: the service deleted it, and a new session has a new secret.
      ctx.out('The relay session expired while disconnected; opening a new one.');
      session = await openSession();
      continue;
    }
    let ending: Ending;
    try {
      ending = await connect(must(ticket).ticket, () => {
        if (lostSince !== null) ctx.out(`Reconnected: ${session.id}.`);
        else ctx.out(`Ready. Signing secret: ${session.secret}`);
        lostSince = null;
      });
    } catch (error) {
      if (!(error instanceof ConnectionRefused)) throw error;
      ending = 'lost';
    }
    if (ending === 'stopped') return;
    if (ending === 'gone') throw new Error(`the relay session ${session.id} was deleted`);
    if (ending === 'replaced') throw new Error(`another connection took the relay session ${session.id} over`);
    lostSince ??= Date.now();
    if (Date.now() - lostSince > RECONNECT_FOR_MS) throw new Error('the connection to the service was lost and could not be opened again');
    ctx.out('Connection lost; reconnecting...');
    if ((await Promise.race([sleep(RECONNECT_EVERY_MS), ctx.stopped.then(() => 'stopped' as const)])) === 'stopped') return;
  }

  async function openSession() {
    const created = must(await ctx.client.POST('/v3/relay-sessions', { body }));
    ctx.out(`Relay session ${created.id}: forwarding ${created.events.join(', ')} to ${forwardTo.href}`);
    return created;
  }

  /** One connection, until it ends: each delivery it hands over is forwarded and answered. */
  function connect(ticket: string, ready: () => void): Promise<Ending> {
    const socket = new WebSocket(`${ctx.apiUrl.replace(/\/$/, '').replace(/^http/, 'ws')}/v3/relay-connections/${ticket}`);
    return new Promise<Ending>((resolve, reject) => {
      let stopped = false;
      void ctx.stopped.then(() => {
        stopped = true;
        socket.close(1000, 'stopped');
      });
      socket.on('unexpected-response', (_, response) => reject(new ConnectionRefused(`HTTP ${response.statusCode}`)));
      socket.on('error', (error) => reject(new ConnectionRefused(error.message)));
      socket.on('message', (data) => {
        const message = JSON.parse((data as Buffer).toString('utf8')) as ServiceMessage;
        if (message.type === 'ready') ready();
        else void forward(message).then((answer) => socket.send(JSON.stringify(answer)));
      });
      socket.on('close', (code) => {
        if (stopped) resolve('stopped');
        else if (code === CLOSE.sessionGone) resolve('gone');
        else if (code === CLOSE.replaced) resolve('replaced');
        else resolve('lost');
      });
    });
  }

  /** POSTs one delivery to the local server as it came, and says what came back. */
  async function forward(delivery: Extract<ServiceMessage, { type: 'request' }>): Promise<RelayAnswerMessage> {
    const started = performance.now();
    const signal = AbortSignal.timeout(LOCAL_TIMEOUT_MS);
    const event = delivery.headers['svc-event'];
    let answer: RelayAnswerMessage;
    try {
      const response = await request(forwardTo, { method: 'POST', headers: delivery.headers, body: delivery.body, signal });
      // Kept as the service keeps any receiver's response: what it would not keep is not sent.
      const capture = captureResponse(response.statusCode, response.headers);
      await readAtMost(response.body, KEPT_BODY_BYTES + 1, capture);
      answer = { type: 'answer', id: delivery.id, ...capture.response() };
    } catch (error) {
      const failure = classifyError(error, signal);
      answer = { type: 'answer', id: delivery.id, error: failure === 'tls' || failure === 'timeout' ? failure : 'connection' };
    }
    const ms = Math.round(performance.now() - started);
    const outcome = 'error' in answer ? `failed (${answer.error})` : `${answer.statusCode}`;
    if (ctx.json) ctx.out(JSON.stringify({ deliveryId: delivery.headers['svc-delivery'], event, outcome, durationMs: ms }));
    else ctx.out(`${new Date().toISOString()}  ${event.padEnd(13)}  ${delivery.headers['svc-delivery']}  -> ${outcome} (${ms} ms)`);
    return answer;
  }
}

/** The --forward-to URL: http or https, on this machine or wherever the developer points it. */
function localUrl(raw: string | undefined): URL {
  if (raw === undefined) throw new UsageError('missing --forward-to');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--forward-to is not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--forward-to must be an http: or https: URL');
  return url;
}

/** The connection could not be opened (the service unreachable, or the ticket refused). */
class ConnectionRefused extends ApiFailure {
  constructor(reason: string) {
    super(0, 'RELAY_CONNECTION', `the relay connection could not be opened: ${reason}`);
  }
}
