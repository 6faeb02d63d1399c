"""The example receiver's HTTP answers and its file store (python3 -m unittest discover, in this folder)."""

import contextlib
import hashlib
import hmac
import io
import json
import os
import tempfile
import threading
import unittest
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from typing import Optional

from example_receiver import FileSeenStore, make_handler, print_event
from svc_webhooks_receiver import Gap, WebhookReceiver

SECRET = "whsec_" + "k" * 43


TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def delivery(cursor: int, signature: Optional[str] = None, traced: bool = False) -> tuple[dict, bytes]:
    """The headers and body of a list.changed delivery, as the service signs them, with a traceparent when traced."""
    body = json.dumps({"event": "list.changed", "listId": "l1", "cursor": cursor, "at": "2026-11-21T10:00:00.000Z"}).encode()
    headers = {
        "svc-event": "list.changed",
        "svc-webhook": "wh_0123456789abcdef01234567",
        "svc-signature": signature or "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest(),
    }
    if traced:
        headers["traceparent"] = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
    return headers, body


class ExampleReceiverTest(unittest.TestCase):
    def test_answers_and_prints_each_verdict(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(WebhookReceiver(SECRET, handler=print_event)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        url = f"http://127.0.0.1:{server.server_address[1]}/"

        def post(cursor: int, signature: Optional[str] = None, traced: bool = False) -> int:
            headers, body = delivery(cursor, signature, traced)
            try:
                with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers, method="POST")) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            statuses = [post(7, traced=True), post(7), post(7, "sha256=00")]
        self.assertEqual(statuses, [204, 204, 401])
        lines = [json.loads(line) for line in printed.getvalue().splitlines()]
        self.assertEqual([line.get("outcome") or line.get("error") for line in lines], ["new", "duplicate", "invalid_signature"])
        self.assertEqual([lines[0]["cursor"], lines[0]["via"]], [7, "push"])
        self.assertEqual([lines[0]["traceId"], lines[1]["traceId"]], [TRACE_ID, None])

    def test_the_file_store_keeps_what_was_seen_across_a_restart(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        path = os.path.join(directory.name, "seen.jsonl")
        WebhookReceiver(SECRET, store=FileSeenStore(path)).receive(*delivery(7))

        restarted = WebhookReceiver(SECRET, store=FileSeenStore(path))
        self.assertEqual(restarted.receive(*delivery(7)).outcome, "duplicate")
        self.assertEqual(restarted.receive(*delivery(10)).gap, Gap(8, 9))


if __name__ == "__main__":
    unittest.main()
