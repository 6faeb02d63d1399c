"""The Python receiver library against the shared vectors (python3 -m unittest discover, in this folder)."""

import json
import pathlib
import subprocess
import sys
import unittest
from typing import Optional

from svc_webhooks_receiver import (
    Delivery,
    DeliveryError,
    Gap,
    MemorySeenStore,
    SeenKey,
    TraceContext,
    Verdict,
    WebhookReceiver,
    parse_traceparent,
    verify,
)

VECTORS_DIR = pathlib.Path(__file__).resolve().parent.parent / "vectors"


def generate_vectors() -> dict:
    """The vectors as generate.py prints them, with secrets of this run's own."""
    printed = subprocess.run([sys.executable, str(VECTORS_DIR / "generate.py")], check=True, capture_output=True, text=True)
    return json.loads(printed.stdout)


VECTORS = generate_vectors()


def trace_of(trace: Optional[TraceContext]) -> Optional[dict]:
    """A trace context in the vectors' terms."""
    return None if trace is None else {"traceId": trace.trace_id, "parentId": trace.parent_id, "sampled": trace.sampled}


def judge(receiver: WebhookReceiver, delivery: dict) -> dict:
    """A verdict in the vectors' terms: the outcome, the gap of a new one, the trace context if any, or the error's code."""
    if "pulled" in delivery:
        return judged_terms(receiver.receive_item(delivery["pulled"]))
    try:
        verdict = receiver.receive(delivery["headers"], delivery["body"].encode("utf-8"))
    except DeliveryError as error:
        return {"error": error.code}
    if delivery.get("forget") and verdict.delivery is not None:
        receiver.forget(verdict.delivery)
    return judged_terms(verdict)


def judged_terms(verdict: Verdict) -> dict:
    judged: dict = {"outcome": verdict.outcome}
    if verdict.outcome == "new":
        judged["gap"] = None if verdict.gap is None else {"first": verdict.gap.first, "last": verdict.gap.last}
    if verdict.trace is not None:
        judged["trace"] = trace_of(verdict.trace)
    return judged


class SignatureVectors(unittest.TestCase):
    def test_each_signature_case(self) -> None:
        for case in VECTORS["signatures"]:
            with self.subTest(case["name"]):
                self.assertIs(verify(case["body"].encode("utf-8"), case["header"], case["secrets"]), case["valid"])
                self.assertIs(verify(case["body"], case["header"], case["secrets"]), case["valid"])


class StreamVectors(unittest.TestCase):
    def test_each_delivery_stream(self) -> None:
        for stream in VECTORS["streams"]:
            with self.subTest(stream["name"]):
                receiver = WebhookReceiver(stream["secrets"], webhook_id=stream["webhookId"])
                verdicts = [judge(receiver, delivery) for delivery in stream["deliveries"]]
                self.assertEqual(verdicts, [delivery["expect"] for delivery in stream["deliveries"]])

    def test_each_run_of_the_script_makes_its_own_secrets(self) -> None:
        again = generate_vectors()
        self.assertEqual([case["name"] for case in again["signatures"]], [case["name"] for case in VECTORS["signatures"]])
        self.assertNotEqual(again["streams"][0]["secrets"], VECTORS["streams"][0]["secrets"])


class TraceContextVectors(unittest.TestCase):
    def test_each_traceparent(self) -> None:
        for case in VECTORS["traceContexts"]:
            with self.subTest(case["name"]):
                self.assertEqual(trace_of(parse_traceparent(case["header"])), case["expect"])

    def test_each_traceparent_on_a_ping(self) -> None:
        for case in VECTORS["traceContexts"]:
            with self.subTest(case["name"]):
                headers = {"svc-event": "ping"} if case["header"] is None else {"svc-event": "ping", "traceparent": case["header"]}
                # A ping needs no secret: its headers alone make a verdict.
                self.assertEqual(trace_of(WebhookReceiver([]).receive(headers, b"").trace), case["expect"])


FIRST, SECOND = VECTORS["streams"][0]["deliveries"][:2]
SECRETS = VECTORS["streams"][0]["secrets"]


class WebhookReceiverTest(unittest.TestCase):
    def test_returns_the_delivery_it_verified_with_its_headers(self) -> None:
        verdict = WebhookReceiver(SECRETS[0]).receive(FIRST["headers"], FIRST["body"].encode("utf-8"))
        body = json.loads(FIRST["body"])
        delivery = Delivery(
            FIRST["headers"]["svc-webhook"], FIRST["headers"]["svc-delivery"], body["event"], body["listId"], body["cursor"], body["at"]
        )
        self.assertEqual(verdict, Verdict("new", delivery, None))

    def test_reads_headers_in_any_case(self) -> None:
        receiver = WebhookReceiver(SECRETS)
        shouted = {name.upper(): value for name, value in FIRST["headers"].items()}
        self.assertEqual(receiver.receive(shouted, FIRST["body"].encode("utf-8")).outcome, "new")

    def test_says_which_header_is_missing(self) -> None:
        headers = {name: value for name, value in FIRST["headers"].items() if name != "svc-webhook"}
        with self.assertRaisesRegex(DeliveryError, "the request has no svc-webhook header"):
            WebhookReceiver(SECRETS).receive(headers, FIRST["body"].encode("utf-8"))

    def test_reports_a_gap_as_the_first_and_last_cursor_missed(self) -> None:
        receiver = WebhookReceiver(SECRETS)
        receiver.receive(FIRST["headers"], FIRST["body"].encode("utf-8"))
        later = VECTORS["streams"][0]["deliveries"][2]
        self.assertEqual(receiver.receive(later["headers"], later["body"].encode("utf-8")).gap, Gap(2, 2))

    def test_keeps_its_state_in_the_store_it_is_given(self) -> None:
        class RecordingStore(MemorySeenStore):
            def __init__(self) -> None:
                super().__init__()
                self.marked: list[SeenKey] = []

            def mark_seen(self, key: SeenKey) -> bool:
                self.marked.append(key)
                return super().mark_seen(key)

        store = RecordingStore()
        WebhookReceiver(SECRETS, store=store).receive(FIRST["headers"], FIRST["body"].encode("utf-8"))
        self.assertEqual(store.marked, [SeenKey(FIRST["headers"]["svc-webhook"], "groceries", "list.changed", 1)])
        # Another receiver on the same store (another process, after a restart) knows what it saw.
        restarted = WebhookReceiver(SECRETS, store=store)
        self.assertEqual(restarted.receive(FIRST["headers"], FIRST["body"].encode("utf-8")).outcome, "duplicate")
        self.assertEqual(restarted.receive(SECOND["headers"], SECOND["body"].encode("utf-8")).outcome, "new")


if __name__ == "__main__":
    unittest.main()
