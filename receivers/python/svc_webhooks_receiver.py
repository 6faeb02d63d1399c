"""The webhook receiver library for Python: one module, standard library only.

The same design as receivers/typescript and receivers/go; docs/receiving.md says how to use it
and why. Verifies a delivery against one or several secrets, answers pings without one, and
tells a new delivery from a duplicate; for list.changed it reports the cursors missed (a gap)
and the ones that come after a later one (late), from the seen-state of a SeenStore. Every
verdict carries the delivery's trace context, from its traceparent header, when it has one.
With a handler and the service's feed, it hands each event to the handler once, whether it came
pushed or pulled, catches up from the position it stored, and pulls the events a cursor gap says
were missed.

    receiver = WebhookReceiver(secrets=["whsec_..."])
    verdict = receiver.receive(request_headers, raw_body)   # raises DeliveryError when refused
    verdict.trace                                           # a TraceContext, or None

    receiver = WebhookReceiver(secrets, store, webhook_id="wh_...", handler=handle,
                               feed=Feed("https://webhooks.example.com", "tok_..."))
    receiver.catch_up()                                     # the events missed while down, to handle(verdict, via)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Callable, Literal, Mapping, Optional, Protocol, Sequence, Union

__all__ = [
    "LIST_CHANGED",
    "MAX_CURSOR",
    "Delivery",
    "DeliveryError",
    "Feed",
    "FeedError",
    "Gap",
    "MemorySeenStore",
    "SeenKey",
    "SeenStore",
    "TraceContext",
    "Verdict",
    "WebhookReceiver",
    "parse_traceparent",
    "verify",
]

#: The topic that fires on every write of a list, so that its cursors come one by one.
LIST_CHANGED = "list.changed"
#: The largest cursor accepted: every integer up to it is exact in all three languages.
MAX_CURSOR = 2**53 - 1

Outcome = Literal["ping", "new", "late", "duplicate", "test"]
#: How an event reached the handler: pushed by the service, or pulled from its feed.
Via = Literal["push", "pull"]
ErrorCode = Literal["missing_header", "invalid_signature", "invalid_body", "other_webhook"]


@dataclass(frozen=True)
class Delivery:
    """A verified event delivery: the signed body's fields, and the headers that name it."""

    webhook_id: str  #: SVC-Webhook
    delivery_id: Optional[str]  #: SVC-Delivery: the id in the delivery log, new for every redelivery
    event: str
    list_id: str
    cursor: int
    at: str


@dataclass(frozen=True)
class Gap:
    """The cursors of one list that no list.changed delivery brought, from first to last inclusive."""

    first: int
    last: int


@dataclass(frozen=True)
class TraceContext:
    """The trace a delivery belongs to, from its traceparent header (W3C Trace Context).

    The service sends the header only when its operator turns it on. It is outside the
    signature, as every header is: take it as a hint for tracing, never as proof of anything.
    """

    trace_id: str  #: 32 lower-case hex digits: the trace of the write the delivery tells of
    parent_id: str  #: 16 lower-case hex digits: the span of the service's POST of this delivery
    sampled: bool  #: the sampled flag: set when the service records the trace; a receiver's sampler follows it


# version-traceid-parentid-flags, then, after a version above 00, more fields after a dash.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")


def parse_traceparent(header: Optional[str]) -> Optional[TraceContext]:
    """The trace context a traceparent header names, or None when it is absent or invalid.

    Follows W3C Trace Context level 1: version 00 is exactly 55 characters; a later version
    may have more fields after a dash, which are ignored; version ff, an all-zero trace-id or
    parent-id, and upper-case hex are invalid.
    """
    match = _TRACEPARENT.fullmatch(header or "")
    if match is None:
        return None
    version, trace_id, parent_id, flags, extra = match.groups()
    if version == "ff" or (version == "00" and extra is not None):
        return None
    if trace_id == "0" * 32 or parent_id == "0" * 16:
        return None
    return TraceContext(trace_id, parent_id, int(flags, 16) & 0x01 == 0x01)


@dataclass(frozen=True)
class Verdict:
    """What a request is.

    ``ping``: answer 2xx and act on nothing in it. ``new``: not seen before; for list.changed,
    ``gap`` names the cursors missed before it, if any (refetch the list). ``late``: list.changed
    below the highest cursor seen, not seen before. ``duplicate``: seen before (same webhook,
    list, event and cursor), a redelivery or a replayed request. ``test``: a test event its
    owner sent (SVC-Test: 1, cursor 0), verified, but no list changed; nothing is marked seen.

    ``trace``, on every verdict, pings and test events included: the delivery's trace context
    from its traceparent header, None when the header is absent or invalid.
    """

    outcome: Outcome
    delivery: Optional[Delivery] = None
    gap: Optional[Gap] = None
    trace: Optional[TraceContext] = None


class DeliveryError(ValueError):
    """A request that is not a delivery this receiver accepts; ``code`` says why. Nothing is recorded for it."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code


@dataclass(frozen=True)
class SeenKey:
    """What makes a delivery the same delivery: a redelivery repeats all four."""

    webhook_id: str
    list_id: str
    event: str
    cursor: int


class SeenStore(Protocol):
    """The receiver's memory.

    Each method must be atomic (of two concurrent mark_seen calls with one key, one gets True),
    and the state must outlive the process for the receiver to see gaps and duplicates across
    restarts: MemorySeenStore keeps it in memory only.
    """

    def mark_seen(self, key: SeenKey) -> bool:
        """Records the key; True when it was not recorded before."""
        ...

    def forget(self, key: SeenKey) -> None:
        """Removes the key, so that the same delivery counts as new when it comes again."""
        ...

    def advance_cursor(self, webhook_id: str, list_id: str, cursor: int) -> Optional[int]:
        """Raises the highest list.changed cursor of (webhook, list) to at least cursor; returns the highest before, None for none."""
        ...

    def position(self, webhook_id: str) -> Optional[str]:
        """The webhook's feed position the catch-up stored last; None for none (it then reads from the oldest item kept)."""
        ...

    def save_position(self, webhook_id: str, position: Optional[str]) -> None:
        """Stores the webhook's feed position; None forgets it."""
        ...


class MemorySeenStore:
    """The default SeenStore: in this process's memory, for as long as it runs. Keeps every key it is given."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[SeenKey] = set()
        self._highest: dict[tuple[str, str], int] = {}
        self._positions: dict[str, str] = {}

    def mark_seen(self, key: SeenKey) -> bool:
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
            return True

    def forget(self, key: SeenKey) -> None:
        with self._lock:
            self._seen.discard(key)

    def advance_cursor(self, webhook_id: str, list_id: str, cursor: int) -> Optional[int]:
        with self._lock:
            previous = self._highest.get((webhook_id, list_id))
            if previous is None or cursor > previous:
                self._highest[(webhook_id, list_id)] = cursor
            return previous

    def position(self, webhook_id: str) -> Optional[str]:
        with self._lock:
            return self._positions.get(webhook_id)

    def save_position(self, webhook_id: str, position: Optional[str]) -> None:
        with self._lock:
            if position is None:
                self._positions.pop(webhook_id, None)
            else:
                self._positions[webhook_id] = position


def _signature(body: bytes, secret: str) -> bytes:
    # Keyed with the UTF-8 bytes of the whole secret, its whsec_ prefix included.
    return b"sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest().encode("ascii")


def verify(body: Union[bytes, str], header: Optional[str], secrets: Sequence[str]) -> bool:
    """True when header is ``sha256=`` and the lowercase hex HMAC-SHA256 of body under one of secrets.

    Each comparison runs in constant time, and every secret is tried, so the time taken does
    not tell which one matched.
    """
    if header is None:
        return False
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    received = header.encode("utf-8", "surrogateescape")
    matches = [hmac.compare_digest(received, _signature(raw, secret)) for secret in secrets]
    return any(matches)


#: The receiver's own handling of an event, for pushed and pulled ones alike: given a ``new`` or
#: ``late`` verdict and how it came. When it raises, the event is forgotten (it counts as new when
#: it comes again) and the exception goes on.
Handler = Callable[[Verdict, Via], None]


@dataclass(frozen=True)
class Feed:
    """Where the catch-up pulls from: the service's API, with a token that has the scope deliveries:read."""

    base_url: str  #: the API's base URL, e.g. https://webhooks.example.com
    token: str
    limit: int = 100  #: items per page, 1 to 500
    ssl_context: Optional[ssl.SSLContext] = None  #: for an API whose certificate the system does not trust


class FeedError(Exception):
    """The feed answered other than 200; ``code`` is the API's error code (POSITION_EXPIRED: the stored position is older than anything kept)."""

    def __init__(self, status: int, code: Optional[str], message: str, oldest_position: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.oldest_position = oldest_position  #: with POSITION_EXPIRED: the oldest position kept


#: The longest the feed holds a request (its wait), in seconds.
_FOLLOW_WAIT_SECONDS = 30
#: How long a gap is pulled for at most, and how long each of its requests may be held, in seconds.
_GAP_FILL_SECONDS = 30
_GAP_POLL_SECONDS = 1

_logger = logging.getLogger(__name__)


class WebhookReceiver:
    """Judges requests for one webhook (or several sharing a store); see docs/receiving.md."""

    def __init__(
        self,
        secrets: Union[str, Sequence[str]],
        store: Optional[SeenStore] = None,
        webhook_id: Optional[str] = None,
        handler: Optional[Handler] = None,
        feed: Optional[Feed] = None,
    ) -> None:
        """secrets: the signing secret, or several while one replaces another.
        store: where what was seen is kept; default a new MemorySeenStore.
        webhook_id: the only SVC-Webhook accepted; without it, the header is trusted as the webhook's id. Needed with feed.
        handler: given every event seen for the first time, pushed (by receive) or pulled (by catch_up); needed with feed.
        feed: the service's feed, for catch_up and for pulling what a cursor gap says was missed.
        """
        self._secrets = [secrets] if isinstance(secrets, str) else list(secrets)
        self._store: SeenStore = store if store is not None else MemorySeenStore()
        self._webhook_id = webhook_id
        self._handler = handler
        self._feed = feed
        if feed is not None and (webhook_id is None or handler is None):
            raise ValueError("a receiver with a feed needs webhook_id and handler")

    def receive(self, headers: Mapping[str, str], body: bytes) -> Verdict:
        """Judges one request from its headers and its raw body, exactly as received.

        Raises DeliveryError for a request it refuses (never for its traceparent: an invalid
        one is no trace context); marks an accepted delivery as seen. With a handler, hands it a
        new or late delivery before returning; with a feed too, a new delivery after a gap starts
        pulling the events missed, in a thread of its own, which reach the handler as late.
        """
        trace = parse_traceparent(_header(headers, "traceparent"))
        event = _required(headers, "svc-event")
        if event == "ping":
            return Verdict("ping", trace=trace)
        signature = _required(headers, "svc-signature")
        webhook_id = _required(headers, "svc-webhook")
        if self._webhook_id is not None and webhook_id != self._webhook_id:
            raise DeliveryError("other_webhook", f"SVC-Webhook is {webhook_id}, not {self._webhook_id}")
        if not verify(body, signature, self._secrets):
            raise DeliveryError("invalid_signature", "SVC-Signature does not match the body under any of the secrets")
        test = _header(headers, "svc-test") == "1"
        delivery = _parse_delivery(body, event, webhook_id, _header(headers, "svc-delivery"), _TEST_CURSOR if test else 1)
        if test:
            return Verdict("test", delivery, trace=trace)
        verdict = self._judge(delivery, trace, "push")
        if verdict.gap is not None and self._feed is not None:
            threading.Thread(target=self._fill_gap, args=(delivery.list_id, verdict.gap), daemon=True).start()
        return verdict

    def receive_item(self, item: Mapping[str, object]) -> Verdict:
        """Judges one item of the feed as catch_up does, for a receiver that pulls the feed itself.

        The item is the same delivery as its push (same webhook, list, event and cursor), so
        whichever comes second is a duplicate. Items come over the authenticated API, unsigned:
        they are trusted by the token that fetched them, and name the receiver's webhook_id,
        which it needs.
        """
        if self._webhook_id is None:
            raise ValueError("receive_item needs the receiver to have a webhook_id")
        delivery = Delivery(
            self._webhook_id, item["deliveryId"], item["event"], item["listId"], item["cursor"], item["at"]  # type: ignore[arg-type]
        )
        return self._judge(delivery, None, "pull")

    def catch_up(self, follow: bool = False, stop: Optional[threading.Event] = None) -> int:
        """Pulls the feed from the position the store keeps, and returns how many events it handed to the handler.

        Page after page, it judges each item (receive_item) and stores the position after each
        page; it returns at the first page that is not full. With follow, it goes on, each
        request held up to 30 s while nothing is new, until stop is set. Safe beside receive and
        another catch_up: the store tells every delivery once, and an item pulled twice is a
        duplicate.
        """
        limit = self._feed_of("catch_up").limit

        def then(page: dict) -> Optional[int]:
            if stop is not None and stop.is_set():
                return None
            if follow:
                return _FOLLOW_WAIT_SECONDS
            return None if len(page["data"]) < limit else 0

        return self._pull(then)

    def _fill_gap(self, list_id: str, gap: Gap) -> None:
        """Pulls until the feed has brought every cursor of the gap, or _GAP_FILL_SECONDS have passed.

        The next catch_up fills what is left: a write's item becomes readable a moment after its
        push may have come, and the writes of a list made while the account was not a member of
        it are in no feed. Runs in a thread of its own; a failure goes to the logger.
        """
        limit = self._feed_of("_fill_gap").limit
        covered: set[int] = set()
        deadline = time.monotonic() + _GAP_FILL_SECONDS

        def then(page: dict) -> Optional[int]:
            for item in page["data"]:
                if item["event"] == LIST_CHANGED and item["listId"] == list_id and gap.first <= item["cursor"] <= gap.last:
                    covered.add(item["cursor"])
            if len(covered) == gap.last - gap.first + 1 or time.monotonic() >= deadline:
                return None
            return _GAP_POLL_SECONDS if len(page["data"]) < limit else 0

        try:
            self._pull(then)
        except Exception:
            _logger.exception("filling the gap %s of list %s failed", gap, list_id)

    def _pull(self, then: Callable[[dict], Optional[int]]) -> int:
        """Pulls pages from the stored position, judging each item and storing the position after each page.

        then, given each page, answers the seconds the next request may be held, or None to stop;
        returns the number of events handed to the handler.
        """
        feed = self._feed_of("_pull")
        webhook_id = self._webhook_id
        assert webhook_id is not None
        handed = 0
        wait: Optional[int] = 0
        while wait is not None:
            after = self._store.position(webhook_id)
            page = _fetch_page(feed, webhook_id, after, wait)
            for item in page["data"]:
                if self.receive_item(item).outcome != "duplicate":
                    handed += 1
            if page["next"] is not None and page["next"] != after:
                self._store.save_position(webhook_id, page["next"])
            wait = then(page)
        return handed

    def _feed_of(self, caller: str) -> Feed:
        if self._feed is None:
            raise ValueError(f"{caller} needs the receiver to have a feed")
        return self._feed

    def forget(self, delivery: Delivery) -> None:
        """Unmarks a delivery you could not accept (answer it 5xx): when it comes again, by a redelivery, it is new."""
        self._store.forget(_key_of(delivery))

    def _judge(self, delivery: Delivery, trace: Optional[TraceContext], via: Via) -> Verdict:
        """Marks a delivery seen, tells new from late and duplicate, and hands a first sight to the handler."""
        if not self._store.mark_seen(_key_of(delivery)):
            return Verdict("duplicate", delivery, trace=trace)
        previous = None
        if delivery.event == LIST_CHANGED:
            previous = self._store.advance_cursor(delivery.webhook_id, delivery.list_id, delivery.cursor)
        if previous is not None and delivery.cursor < previous:
            verdict = Verdict("late", delivery, trace=trace)
        else:
            gap = Gap(previous + 1, delivery.cursor - 1) if previous is not None and delivery.cursor > previous + 1 else None
            verdict = Verdict("new", delivery, gap, trace)
        if self._handler is not None:
            try:
                self._handler(verdict, via)
            except BaseException:
                self.forget(delivery)
                raise
        return verdict


def _fetch_page(feed: Feed, webhook_id: str, after: Optional[str], wait: int) -> dict:
    """One page of the feed after after (from the oldest kept when None), held up to wait seconds while it is empty."""
    query = {"limit": str(feed.limit)}
    if after is not None:
        query["after"] = after
    if wait > 0:
        query["wait"] = str(wait)
    url = f"{feed.base_url.rstrip('/')}/v3/webhooks/{urllib.parse.quote(webhook_id, safe='')}/events?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"authorization": f"Bearer {feed.token}", "accept": "application/json"})
    try:
        # Long enough for a held request, and its answer, to come back.
        with urllib.request.urlopen(request, timeout=wait + 30, context=feed.ssl_context) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as failure:
        try:
            error = json.loads(failure.read()).get("error") or {}
        except ValueError:
            error = {}
        message = f"the feed answered {failure.code}" + (f": {error['message']}" if error.get("message") else "")
        raise FeedError(failure.code, error.get("code"), message, error.get("oldestPosition")) from failure


def _key_of(delivery: Delivery) -> SeenKey:
    return SeenKey(delivery.webhook_id, delivery.list_id, delivery.event, delivery.cursor)


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    # http.server's headers and most frameworks' are case-insensitive already; a dict is not.
    value = headers.get(name)
    if value is None:
        value = next((value for key, value in headers.items() if key.lower() == name), None)
    return value


def _required(headers: Mapping[str, str], name: str) -> str:
    """A header that must be there and not empty."""
    value = _header(headers, name)
    if not value:
        raise DeliveryError("missing_header", f"the request has no {name} header")
    return value


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


#: A test event's cursor: no write has it.
_TEST_CURSOR = 0


def _parse_delivery(body: bytes, header_event: str, webhook_id: str, delivery_id: Optional[str], least_cursor: int) -> Delivery:
    try:
        # Python's json takes NaN and Infinity, which JSON (and the other two libraries) do not.
        parsed = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except ValueError as error:
        raise DeliveryError("invalid_body", "the body is not JSON in UTF-8") from error
    if not isinstance(parsed, dict):
        raise DeliveryError("invalid_body", "the body is not a JSON object")
    event, list_id, cursor, at = (parsed.get(field) for field in ("event", "listId", "cursor", "at"))
    if not isinstance(event, str) or event == "":
        raise DeliveryError("invalid_body", "`event` is not a non-empty string")
    if not isinstance(list_id, str) or list_id == "":
        raise DeliveryError("invalid_body", "`listId` is not a non-empty string")
    # JSON has one number type: 7 and 7.0 are the same cursor, as in the other two libraries.
    if isinstance(cursor, float) and cursor.is_integer():
        cursor = int(cursor)
    if isinstance(cursor, bool) or not isinstance(cursor, int) or not least_cursor <= cursor <= MAX_CURSOR:
        raise DeliveryError("invalid_body", f"`cursor` is not an integer from {least_cursor} to {MAX_CURSOR}")
    if not isinstance(at, str):
        raise DeliveryError("invalid_body", "`at` is not a string")
    if event != header_event:
        raise DeliveryError("invalid_body", f"the signed body's event is {event}, SVC-Event says {header_event}")
    return Delivery(webhook_id, delivery_id, event, list_id, cursor, at)
