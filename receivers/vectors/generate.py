#!/usr/bin/env python3
"""Prints the test vectors as JSON: the cases every receiver library must pass, with the outcome each must give.

It imports none of the libraries: the signatures are computed here, with the standard library,
from the signing rules of docs/api.md, and every expected outcome is written out by hand below,
as docs/receiving.md states the rules (and, for traceparent, as W3C Trace Context level 1
does). The secrets are made afresh on every run, so no signing secret is ever committed; each
library's tests run it and read its output:

    python3 receivers/vectors/generate.py
"""

import hashlib
import hmac
import json
import secrets


def new_secret() -> str:
    """A signing secret of the service's form: whsec_ and 32 random bytes, base64url."""
    return "whsec_" + secrets.token_urlsafe(32)


SECRET = new_secret()
OTHER_SECRET = new_secret()
OLD_SECRET = new_secret()
NEW_SECRET = new_secret()
WEBHOOK = "wh_0123456789abcdef01234567"
OTHER_WEBHOOK = "wh_fedcba9876543210fedcba98"
AT = "2026-11-21T10:00:00.000Z"


def sign(body: str, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body.encode("utf-8"), hashlib.sha256).hexdigest()


def body(event: str, list_id: str, cursor, at: str = AT) -> str:
    # The service's exact bytes: these keys in this order, no spaces.
    return json.dumps({"event": event, "listId": list_id, "cursor": cursor, "at": at}, separators=(",", ":"))


def new(gap=None) -> dict:
    return {"outcome": "new", "gap": None if gap is None else {"first": gap[0], "last": gap[1]}}


LATE = {"outcome": "late"}
DUPLICATE = {"outcome": "duplicate"}
PING = {"outcome": "ping"}
TEST = {"outcome": "test"}
#: The header that marks a test event an owner sent (POST /v3/webhooks/{id}/test-events).
TEST_HEADER = {"svc-test": "1"}
#: The trace of the write, and the span of a delivery's POST, that a traceparent names.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


def traced(sampled: bool, parent_id: str = PARENT_ID) -> dict:
    """The trace context a library returns for a valid traceparent."""
    return {"traceId": TRACE_ID, "parentId": parent_id, "sampled": sampled}


def traceparent(sampled: bool, parent_id: str = PARENT_ID) -> dict:
    """The header that gives traced(sampled, parent_id), as the service sends it."""
    return {"traceparent": f"00-{TRACE_ID}-{parent_id}-{'01' if sampled else '00'}"}


def error(code: str) -> dict:
    return {"error": code}


def delivery_id_of(payload: str, webhook: str = WEBHOOK) -> str:
    """The SVC-Delivery id of a delivery in these vectors: one per body and webhook, as the service has one per write and topic."""
    return "dlv_" + hashlib.sha256(payload.encode() + webhook.encode()).hexdigest()[:24]


def delivery(payload: str, expect: dict, *, event=None, secret=SECRET, webhook=WEBHOOK, delivery_id=None, **options) -> dict:
    """One request as the service sends it (headers in lower case), unless options change it."""
    headers = {
        "svc-event": event if event is not None else json.loads(payload)["event"],
        "svc-signature": sign(payload, secret),
        "svc-webhook": webhook,
        "svc-delivery": delivery_id or delivery_id_of(payload, webhook),
    }
    for name in options.pop("without", []):
        del headers[name]
    headers.update(options.pop("headers", {}))
    entry = {"headers": headers, "body": payload, "expect": expect}
    if options.pop("forget", False):
        entry["forget"] = True
    assert not options, options
    return entry


def changed(list_id: str, cursor: int, expect: dict, **options) -> dict:
    return delivery(body("list.changed", list_id, cursor), expect, **options)


def pulled(event: str, list_id: str, cursor: int, position: int, expect: dict) -> dict:
    """One item of the webhook's feed (GET /v3/webhooks/{id}/events), for the receiver pinned to WEBHOOK: the same delivery its push is."""
    payload = body(event, list_id, cursor)
    item = {"position": f"p{position:06d}", "deliveryId": delivery_id_of(payload), "event": event, "listId": list_id, "cursor": cursor, "at": AT}
    return {"pulled": item, "expect": expect}


def signature_cases() -> list:
    signed = body("list.changed", "groceries", 7)
    good = sign(signed, SECRET)
    digest = good.removeprefix("sha256=")
    reserialised = json.dumps(json.loads(signed))  # Python's default separators add spaces
    assert reserialised != signed

    def case(name, header, valid, *, payload=signed, secrets=(SECRET,)):
        return {"name": name, "body": payload, "secrets": list(secrets), "header": header, "valid": valid}

    return [
        case("valid", good, True),
        case("signed with another secret", sign(signed, OTHER_SECRET), False),
        case("body changed after signing", good, False, payload=signed.replace('"cursor":7', '"cursor":8')),
        case("upper-case hex", "sha256=" + digest.upper(), False),
        case("prefix missing", digest, False),
        case("another prefix", "sha1=" + digest, False),
        case("prefix in upper case", "SHA256=" + digest, False),
        case("cut short", good[:-1], False),
        case("empty", "", False),
        case("header absent", None, False),
        case("trailing space", good + " ", False),
        case("body re-serialised", good, False, payload=reserialised),
        case("keyed without the whsec_ prefix", sign(signed, SECRET.removeprefix("whsec_")), False),
        case("no secret configured", good, False, secrets=()),
        case("rotation: signed with the new secret", sign(signed, NEW_SECRET), True, secrets=(OLD_SECRET, NEW_SECRET)),
        case("rotation: signed with the old secret", sign(signed, OLD_SECRET), True, secrets=(OLD_SECRET, NEW_SECRET)),
        case("rotation: signed with neither", sign(signed, OTHER_SECRET), False, secrets=(OLD_SECRET, NEW_SECRET)),
    ]


def stream(name: str, deliveries: list, *, secrets=(SECRET,), webhook_id=None) -> dict:
    # An entry is a request (headers and body) or, with "pulled", an item of the feed, judged as the catch-up does.
    return {"name": name, "secrets": list(secrets), "webhookId": webhook_id, "deliveries": deliveries}


def stream_cases() -> list:
    first = changed("groceries", 1, new(), delivery_id="dlv_000000000000000000000001")
    return [
        stream(
            "in order",
            [changed("groceries", 1, new()), changed("groceries", 2, new()), changed("groceries", 3, new())],
        ),
        stream(
            "repeated: the same request replayed",
            [first, changed("groceries", 2, new()), {**first, "expect": DUPLICATE}],
        ),
        stream(
            "redelivered under a rotated secret and a new delivery id",
            [
                changed("groceries", 1, new(), secret=OLD_SECRET, delivery_id="dlv_00000000000000000000000a"),
                changed("groceries", 2, new(), secret=OLD_SECRET),
                changed("groceries", 1, DUPLICATE, secret=NEW_SECRET, delivery_id="dlv_00000000000000000000000b"),
                changed("groceries", 3, new(), secret=NEW_SECRET),
            ],
            secrets=(OLD_SECRET, NEW_SECRET),
        ),
        stream(
            "out of order",
            [
                changed("groceries", 1, new()),
                changed("groceries", 3, new((2, 2))),
                changed("groceries", 2, LATE),
                changed("groceries", 4, new()),
            ],
        ),
        stream(
            "missing cursors on one list and not another",
            [
                changed("pantry", 1, new()),
                changed("groceries", 1, new()),
                changed("pantry", 2, new()),
                changed("groceries", 5, new((2, 4))),
                changed("pantry", 3, new()),
                changed("groceries", 6, new()),
                changed("groceries", 3, LATE),
                changed("groceries", 3, DUPLICATE),
                changed("groceries", 2, LATE),
                changed("groceries", 4, LATE),
                changed("groceries", 9, new((7, 8))),
            ],
        ),
        stream(
            "the first delivery of a list sets where it starts: nothing before it is a gap",
            [changed("groceries", 40, new()), changed("groceries", 41, new()), changed("groceries", 39, LATE)],
        ),
        stream(
            "other topics: duplicates told, no gap and no late arrival",
            [
                delivery(body("item.added", "groceries", 1), new()),
                delivery(body("item.added", "groceries", 5), new()),
                delivery(body("item.added", "groceries", 5), DUPLICATE),
                delivery(body("item.added", "groceries", 3), new()),
                delivery(body("item.checked", "groceries", 5), new()),
                changed("groceries", 5, new()),
            ],
        ),
        stream(
            "two webhooks on one list: each has its own cursors",
            [
                changed("groceries", 1, new()),
                changed("groceries", 1, new(), webhook=OTHER_WEBHOOK),
                changed("groceries", 3, new((2, 2)), webhook=OTHER_WEBHOOK),
                changed("groceries", 2, new()),
            ],
        ),
        stream(
            "a ping is answered without a secret and changes nothing",
            [
                delivery('{"event":"ping","webhookId":"%s","at":"%s"}' % (WEBHOOK, AT), PING, secret=OTHER_SECRET),
                delivery("", PING, event="ping", without=["svc-signature", "svc-webhook", "svc-delivery"]),
                delivery("not json", PING, event="ping", headers={"svc-signature": "sha256=unknown-to-the-receiver"}),
                changed("groceries", 3, new()),
                changed("groceries", 4, new()),
            ],
        ),
        stream(
            "refused requests leave no trace",
            [
                changed("groceries", 1, error("missing_header"), without=["svc-event"]),
                changed("groceries", 1, error("missing_header"), without=["svc-signature"]),
                changed("groceries", 1, error("missing_header"), without=["svc-webhook"]),
                changed("groceries", 1, error("missing_header"), headers={"svc-signature": ""}),
                changed("groceries", 1, error("invalid_signature"), secret=OTHER_SECRET),
                delivery("not json", error("invalid_body"), event="list.changed"),
                delivery('["list.changed","groceries",1]', error("invalid_body"), event="list.changed"),
                delivery('{"event":"list.changed","listId":"groceries","at":"%s"}' % AT, error("invalid_body")),
                delivery(body("list.changed", "groceries", "1"), error("invalid_body")),
                delivery(body("list.changed", "groceries", 0), error("invalid_body")),
                delivery(body("list.changed", "groceries", 1.5), error("invalid_body")),
                delivery(body("list.changed", "", 1), error("invalid_body")),
                changed("groceries", 1, error("invalid_body"), event="item.added"),
                changed("groceries", 1, new()),
                changed("groceries", 2, error("invalid_signature"), secret=OTHER_SECRET),
                changed("groceries", 2, new()),
            ],
        ),
        stream(
            "pinned to one webhook: its body replayed under another webhook's id is refused",
            [
                changed("groceries", 1, error("other_webhook"), webhook=OTHER_WEBHOOK),
                changed("groceries", 1, new()),
                changed("groceries", 1, DUPLICATE),
            ],
            webhook_id=WEBHOOK,
        ),
        stream(
            "a test event (SVC-Test: 1, cursor 0) is verified but marks nothing seen: the stream's cursors go on from it untouched",
            [
                changed("groceries", 0, TEST, headers=TEST_HEADER),
                changed("groceries", 0, TEST, headers=TEST_HEADER),
                delivery(body("item.checked", "test", 0), TEST, headers=TEST_HEADER),
                changed("groceries", 0, error("invalid_signature"), secret=OTHER_SECRET, headers=TEST_HEADER),
                changed("groceries", 0, error("invalid_body")),
                changed("groceries", 1, new()),
                changed("groceries", 1, TEST, headers=TEST_HEADER),
                changed("groceries", 2, new()),
            ],
        ),
        stream(
            "a valid traceparent gives every verdict its trace context; an invalid one gives none, and refuses nothing",
            [
                delivery('{"event":"ping","webhookId":"%s","at":"%s"}' % (WEBHOOK, AT), {**PING, "trace": traced(True)}, headers=traceparent(True)),
                changed("groceries", 0, {**TEST, "trace": traced(False)}, headers={**TEST_HEADER, **traceparent(False)}),
                changed("groceries", 1, {**new(), "trace": traced(True, "00000000000000a1")}, headers=traceparent(True, "00000000000000a1")),
                changed("groceries", 3, {**new((2, 2)), "trace": traced(True, "00000000000000a3")}, headers=traceparent(True, "00000000000000a3")),
                changed("groceries", 2, {**LATE, "trace": traced(False, "00000000000000a2")}, headers=traceparent(False, "00000000000000a2")),
                changed("groceries", 2, {**DUPLICATE, "trace": traced(True, "00000000000000b2")}, headers=traceparent(True, "00000000000000b2")),
                changed("groceries", 4, new(), headers={"traceparent": f"ff-{TRACE_ID}-{PARENT_ID}-01"}),
                changed("groceries", 5, new(), headers={"traceparent": "not a traceparent"}),
                changed("groceries", 6, error("invalid_signature"), secret=OTHER_SECRET, headers=traceparent(True)),
                changed("groceries", 6, new()),
            ],
        ),
        stream(
            "pushed and pulled (the feed's items): each delivery once, whichever way it comes first",
            [
                changed("groceries", 1, new()),
                pulled("list.changed", "groceries", 1, 1, DUPLICATE),
                pulled("list.changed", "groceries", 2, 2, new()),
                changed("groceries", 2, DUPLICATE),
                pulled("list.changed", "groceries", 4, 4, new((3, 3))),
                changed("groceries", 3, LATE),
                pulled("list.changed", "groceries", 3, 3, DUPLICATE),
                pulled("item.added", "groceries", 4, 5, new()),
                delivery(body("item.added", "groceries", 4), DUPLICATE),
                changed("groceries", 1, DUPLICATE, delivery_id="dlv_00000000000000000000000c"),
            ],
            webhook_id=WEBHOOK,
        ),
        stream(
            "a delivery forgotten (not accepted) is new when it comes again",
            [
                changed("groceries", 1, new()),
                changed("groceries", 2, new(), forget=True),
                changed("groceries", 2, new()),
                changed("groceries", 3, new(), forget=True),
                changed("groceries", 4, new()),
                changed("groceries", 3, LATE),
            ],
        ),
    ]


def trace_context_cases() -> list:
    """traceparent headers (W3C Trace Context level 1) and the trace context each gives, None for none."""

    def case(name, header, expect):
        return {"name": name, "header": header, "expect": expect}

    return [
        case("sampled", f"00-{TRACE_ID}-{PARENT_ID}-01", traced(True)),
        case("not sampled", f"00-{TRACE_ID}-{PARENT_ID}-00", traced(False)),
        case("flags other than sampled are ignored", f"00-{TRACE_ID}-{PARENT_ID}-03", traced(True)),
        case("flags other than sampled, not sampled", f"00-{TRACE_ID}-{PARENT_ID}-fe", traced(False)),
        case("a future version, its extra fields ignored", f"cc-{TRACE_ID}-{PARENT_ID}-01-what-the-future-holds", traced(True)),
        case("a future version with no extra field", f"01-{TRACE_ID}-{PARENT_ID}-00", traced(False)),
        case("header absent", None, None),
        case("empty", "", None),
        case("version ff", f"ff-{TRACE_ID}-{PARENT_ID}-01", None),
        case("version 00 with an extra field", f"00-{TRACE_ID}-{PARENT_ID}-01-extra", None),
        case("version 00 with a dash at the end", f"00-{TRACE_ID}-{PARENT_ID}-01-", None),
        case("a future version with no dash before its extra fields", f"cc-{TRACE_ID}-{PARENT_ID}-01extra", None),
        case("trace-id all zeros", f"00-{'0' * 32}-{PARENT_ID}-01", None),
        case("parent-id all zeros", f"00-{TRACE_ID}-{'0' * 16}-01", None),
        case("upper-case version", f"0A-{TRACE_ID}-{PARENT_ID}-01", None),
        case("upper-case trace-id", f"00-{TRACE_ID.upper()}-{PARENT_ID}-01", None),
        case("upper-case parent-id", f"00-{TRACE_ID}-{PARENT_ID.upper()}-01", None),
        case("upper-case flags", f"00-{TRACE_ID}-{PARENT_ID}-0A", None),
        case("not hex", f"00-{TRACE_ID[:-1]}g-{PARENT_ID}-01", None),
        case("version of one digit", f"0-{TRACE_ID}-{PARENT_ID}-01", None),
        case("trace-id one digit short", f"00-{TRACE_ID[:-1]}-{PARENT_ID}-01", None),
        case("trace-id one digit long", f"00-{TRACE_ID}0-{PARENT_ID}-01", None),
        case("parent-id one digit short", f"00-{TRACE_ID}-{PARENT_ID[:-1]}-01", None),
        case("parent-id one digit long", f"00-{TRACE_ID}-{PARENT_ID}0-01", None),
        case("flags of one digit", f"00-{TRACE_ID}-{PARENT_ID}-1", None),
        case("flags missing", f"00-{TRACE_ID}-{PARENT_ID}", None),
        case("another separator", f"00_{TRACE_ID}_{PARENT_ID}_01", None),
    ]


def build() -> str:
    vectors = {
        "about": "Receiver test vectors, printed by receivers/vectors/generate.py; docs/receiving.md says what each outcome means.",
        "signatures": signature_cases(),
        "streams": stream_cases(),
        "traceContexts": trace_context_cases(),
    }
    return json.dumps(vectors, indent=2) + "\n"


if __name__ == "__main__":
    print(build(), end="")
