"""An example webhook receiver (docs/receiving.md) written with svc_webhooks_receiver, as
receivers/typescript/example-receiver.mjs and receivers/go/cmd/example-receiver are with theirs:

    WEBHOOK_SECRETS=whsec_new,whsec_old SEEN_STATE_FILE=seen.jsonl TLS_CERT=cert.pem TLS_KEY=key.pem \\
      PORT=8443 python3 example_receiver.py

WEBHOOK_SECRETS holds one secret, or several (comma-separated) while one replaces another;
WEBHOOK_ID, if set, is the only SVC-Webhook accepted. With SVC_API_URL and SVC_API_TOKEN (a
token with deliveries:read) and WEBHOOK_ID, it catches up from the webhook's feed once it
listens, then serves pushes, and pulls what a cursor gap says it missed. Without TLS_CERT and
TLS_KEY it serves plain HTTP, for behind an HTTPS terminator. It prints {"listening": port},
then one JSON line per event handed to its handler (with "via": "push" or "pull") and per other
verdict or refused request, and {"caughtUp": n} when the catch-up at start is done: the verdict
with the delivery's trace id (null when it came without a valid traceparent), or the error that
refused it.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import threading
from dataclasses import astuple
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from svc_webhooks_receiver import DeliveryError, Feed, MemorySeenStore, SeenKey, Verdict, Via, WebhookReceiver

MAX_BODY_BYTES = 64 * 1024


class FileSeenStore:
    """A SeenStore kept in a file, so that gaps and duplicates are told across restarts.

    The library's MemorySeenStore, with every change appended to the file as a JSON line and
    replayed at start. An example for one process: a production receiver keeps this in its database.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        # Held across each change and its line, so that the file has them in the order they were made.
        self._lock = threading.Lock()
        self._memory = MemorySeenStore()
        if os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                for change in map(json.loads, file):
                    if "markSeen" in change:
                        self._memory.mark_seen(SeenKey(*change["markSeen"]))
                    if "forget" in change:
                        self._memory.forget(SeenKey(*change["forget"]))
                    if "advanceCursor" in change:
                        self._memory.advance_cursor(*change["advanceCursor"])
                    if "savePosition" in change:
                        self._memory.save_position(*change["savePosition"])

    def mark_seen(self, key: SeenKey) -> bool:
        with self._lock:
            is_new = self._memory.mark_seen(key)
            if is_new:
                self._append({"markSeen": astuple(key)})
            return is_new

    def forget(self, key: SeenKey) -> None:
        with self._lock:
            self._memory.forget(key)
            self._append({"forget": astuple(key)})

    def advance_cursor(self, webhook_id: str, list_id: str, cursor: int) -> Optional[int]:
        with self._lock:
            previous = self._memory.advance_cursor(webhook_id, list_id, cursor)
            if previous is None or cursor > previous:
                self._append({"advanceCursor": [webhook_id, list_id, cursor]})
            return previous

    def position(self, webhook_id: str) -> Optional[str]:
        return self._memory.position(webhook_id)

    def save_position(self, webhook_id: str, position: Optional[str]) -> None:
        with self._lock:
            self._memory.save_position(webhook_id, position)
            self._append({"savePosition": [webhook_id, position]})

    def _append(self, change: dict) -> None:
        with open(self._path, "a", encoding="utf-8") as file:
            file.write(json.dumps(change) + "\n")


def describe(verdict: Verdict) -> dict:
    """One JSON line's worth: the verdict with its delivery's fields and trace id."""
    trace_id = None if verdict.trace is None else verdict.trace.trace_id
    if verdict.delivery is None:
        return {"outcome": verdict.outcome, "traceId": trace_id}
    delivery = verdict.delivery
    return {
        "outcome": verdict.outcome,
        "traceId": trace_id,
        "webhookId": delivery.webhook_id,
        "deliveryId": delivery.delivery_id,
        "event": delivery.event,
        "listId": delivery.list_id,
        "cursor": delivery.cursor,
        "at": delivery.at,
        "gap": None if verdict.gap is None else {"first": verdict.gap.first, "last": verdict.gap.last},
    }


def print_line(line: dict) -> None:
    print(json.dumps(line), flush=True)


def print_event(verdict: Verdict, via: Via) -> None:
    """The receiver's handler: every event, pushed or pulled, once."""
    print_line({**describe(verdict), "via": via})


def make_handler(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    """The HTTP handler: judges every request with receiver, whose handler has the events, and prints the rest."""

    class DeliveryHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY_BYTES:
                self._answer(413)
                return
            # Verify the raw bytes as received: the library parses them only once they are verified.
            body = self.rfile.read(length)
            try:
                verdict = receiver.receive(self.headers, body)
            except DeliveryError as error:
                print_line({"error": error.code, "message": str(error)})
                self._answer(401 if error.code == "invalid_signature" else 400)
                return
            if verdict.outcome not in ("new", "late"):
                print_line(describe(verdict))
            # Answer quickly (the service waits at most DELIVERY_TIMEOUT_MS); do slow work afterwards.
            # A duplicate is answered 2xx too: it was handled when it first came.
            self._answer(204)

        def _answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass  # stdout carries the verdicts, one JSON line each

    return DeliveryHandler


def main() -> None:
    env = os.environ
    store = FileSeenStore(env["SEEN_STATE_FILE"]) if env.get("SEEN_STATE_FILE") else None
    secrets = [secret for secret in env.get("WEBHOOK_SECRETS", "").split(",") if secret]
    feed = Feed(env["SVC_API_URL"], env.get("SVC_API_TOKEN", "")) if env.get("SVC_API_URL") else None
    receiver = WebhookReceiver(secrets, store=store, webhook_id=env.get("WEBHOOK_ID") or None, handler=print_event, feed=feed)
    server = ThreadingHTTPServer(("", int(env.get("PORT", "8443"))), make_handler(receiver))
    if env.get("TLS_CERT") and env.get("TLS_KEY"):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(env["TLS_CERT"], env["TLS_KEY"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print_line({"listening": server.server_address[1]})
    if feed is not None:
        # Pushes are served meanwhile: the store tells each event once, whichever way it comes first.
        threading.Thread(target=lambda: print_line({"caughtUp": receiver.catch_up()}), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
