// Package receiver is the webhook receiver library for Go, standard library only: the same
// design as receivers/typescript and receivers/python, documented in docs/receiving.md.
//
// It verifies a delivery against one or several secrets, answers pings without one, and tells
// a new delivery from a duplicate; for list.changed it reports the cursors missed (a gap) and
// the ones that come after a later one (late), from the seen-state of a SeenStore. Every
// verdict carries the delivery's trace context, from its traceparent header, when it has one.
// With a Handler and the service's Feed, it hands each event to the handler once, whether it
// came pushed or pulled, catches up from the position it stored (CatchUp), and pulls the events
// a cursor gap says were missed.
package receiver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ListChanged is the topic that fires on every write of a list, so that its cursors come one by one.
const ListChanged = "list.changed"

// MaxCursor is the largest cursor accepted: every integer up to it is exact in all three languages.
const MaxCursor = 1<<53 - 1

// Outcome says what a request is.
type Outcome string

const (
	// OutcomePing is a registration or manual ping: answer 2xx, and act on nothing in it.
	OutcomePing Outcome = "ping"
	// OutcomeNew is a delivery not seen before. For list.changed, Verdict.Gap names the
	// cursors missed before it, if any: refetch the list.
	OutcomeNew Outcome = "new"
	// OutcomeLate is a list.changed delivery below the highest cursor seen, not seen before:
	// an older write, after a newer one.
	OutcomeLate Outcome = "late"
	// OutcomeDuplicate is a delivery seen before (same webhook, list, event and cursor): a
	// redelivery or a replayed request.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeTest is a test event its owner sent (SVC-Test: 1, cursor 0): verified, but no
	// list changed. Nothing is marked seen.
	OutcomeTest Outcome = "test"
)

// testCursor is a test event's cursor: no write has it.
const testCursor = 0

// Delivery is a verified event delivery: the signed body's fields, and the headers that name it.
type Delivery struct {
	WebhookID  string // SVC-Webhook
	DeliveryID string // SVC-Delivery: the id in the delivery log, new for every redelivery; "" when absent
	Event      string
	ListID     string
	Cursor     int64
	At         string
}

// Gap is the cursors of one list that no list.changed delivery brought, from First to Last inclusive.
type Gap struct {
	First int64
	Last  int64
}

// Verdict is what Receive made of a request. Delivery is nil for a ping; Gap is nil unless a
// new list.changed delivery follows missed cursors. Trace, on every verdict, pings and test
// events included, is the delivery's trace context from its traceparent header; nil when the
// header is absent or invalid.
type Verdict struct {
	Outcome  Outcome
	Delivery *Delivery
	Gap      *Gap
	Trace    *TraceContext
}

// TraceContext is the trace a delivery belongs to, from its traceparent header (W3C Trace
// Context). The service sends the header only when its operator turns it on. It is outside the
// signature, as every header is: take it as a hint for tracing, never as proof of anything.
type TraceContext struct {
	TraceID  string // 32 lower-case hex digits: the trace of the write the delivery tells of
	ParentID string // 16 lower-case hex digits: the span of the service's POST of this delivery
	Sampled  bool   // the sampled flag: set when the service records the trace; a receiver's sampler follows it
}

// traceparentPattern is version-traceid-parentid-flags, then, after a version above 00, more
// fields after a dash.
var traceparentPattern = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$`)

// ParseTraceparent returns the trace context a traceparent header names, or nil when it is
// absent ("") or invalid. It follows W3C Trace Context level 1: version 00 is exactly 55
// characters; a later version may have more fields after a dash, which are ignored; version ff,
// an all-zero trace-id or parent-id, and upper-case hex are invalid.
func ParseTraceparent(header string) *TraceContext {
	match := traceparentPattern.FindStringSubmatch(header)
	if match == nil {
		return nil
	}
	version, traceID, parentID, flags, extra := match[1], match[2], match[3], match[4], match[5]
	if version == "ff" || (version == "00" && extra != "") {
		return nil
	}
	if traceID == strings.Repeat("0", 32) || parentID == strings.Repeat("0", 16) {
		return nil
	}
	flagBits, _ := hex.DecodeString(flags) // two hex digits, by the pattern
	return &TraceContext{TraceID: traceID, ParentID: parentID, Sampled: flagBits[0]&0x01 == 0x01}
}

// ErrorCode says why a request was refused.
type ErrorCode string

const (
	ErrMissingHeader    ErrorCode = "missing_header"
	ErrInvalidSignature ErrorCode = "invalid_signature"
	ErrInvalidBody      ErrorCode = "invalid_body"
	ErrOtherWebhook     ErrorCode = "other_webhook"
)

// Error is a request that is not a delivery this receiver accepts; Code says why. Nothing is
// recorded for it. Store failures are returned as they are, not as an *Error.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// SeenKey is what makes a delivery the same delivery: a redelivery repeats all four.
type SeenKey struct {
	WebhookID string
	ListID    string
	Event     string
	Cursor    int64
}

// SeenStore is the receiver's memory. Each method must be atomic (of two concurrent MarkSeen
// calls with one key, one gets true), and the state must outlive the process for the receiver
// to see gaps and duplicates across restarts: MemoryStore keeps it in memory only.
type SeenStore interface {
	// MarkSeen records the key; true when it was not recorded before.
	MarkSeen(ctx context.Context, key SeenKey) (bool, error)
	// Forget removes the key, so that the same delivery counts as new when it comes again.
	Forget(ctx context.Context, key SeenKey) error
	// AdvanceCursor raises the highest list.changed cursor of (webhook, list) to at least
	// cursor; it returns the highest before, and found false for none.
	AdvanceCursor(ctx context.Context, webhookID, listID string, cursor int64) (previous int64, found bool, err error)
	// Position returns the webhook's feed position CatchUp stored last; "" for none (it then
	// reads from the oldest item kept).
	Position(ctx context.Context, webhookID string) (string, error)
	// SavePosition stores the webhook's feed position; "" forgets it.
	SavePosition(ctx context.Context, webhookID, position string) error
}

// Verify reports whether header is "sha256=" and the lowercase hex HMAC-SHA256 of body under
// one of secrets. Each comparison runs in constant time, and every secret is tried, so the
// time taken does not tell which one matched.
func Verify(body []byte, header string, secrets []string) bool {
	matched := false
	for _, secret := range secrets {
		matched = hmac.Equal([]byte(header), signature(body, secret)) || matched
	}
	return matched
}

// signature is keyed with the UTF-8 bytes of the whole secret, its whsec_ prefix included.
func signature(body []byte, secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return []byte("sha256=" + hex.EncodeToString(mac.Sum(nil)))
}

// Config configures a Receiver.
type Config struct {
	// Secrets is the webhook's signing secret, or several while one replaces another.
	Secrets []string
	// Store is where what was seen is kept; nil for a new MemoryStore.
	Store SeenStore
	// WebhookID is the only SVC-Webhook accepted; "" trusts the header as the webhook's id.
	// Needed with Feed.
	WebhookID string
	// Handler is given every event seen for the first time, pushed (by Receive) or pulled (by
	// CatchUp); needed with Feed.
	Handler Handler
	// Feed is the service's feed, for CatchUp and for pulling what a cursor gap says was missed.
	Feed *Feed
}

// Receiver judges requests for one webhook (or several sharing a store). Safe for concurrent
// use when its store and handler are.
type Receiver struct {
	secrets   []string
	store     SeenStore
	webhookID string
	handler   Handler
	feed      *Feed
}

// New returns a Receiver for config. It panics when config has a Feed without a WebhookID and
// a Handler.
func New(config Config) *Receiver {
	store := config.Store
	if store == nil {
		store = NewMemoryStore()
	}
	if config.Feed != nil && (config.WebhookID == "" || config.Handler == nil) {
		panic("receiver: a Config with a Feed needs WebhookID and Handler")
	}
	return &Receiver{
		secrets:   append([]string(nil), config.Secrets...),
		store:     store,
		webhookID: config.WebhookID,
		handler:   config.Handler,
		feed:      config.Feed,
	}
}

// Receive judges one request from its headers and its raw body, exactly as received. A request
// it refuses returns an *Error (never for its traceparent: an invalid one is no trace context);
// an accepted delivery is marked as seen. With a Handler, a new or late delivery is handed to it
// before Receive returns; with a Feed too, a new delivery after a gap starts pulling the events
// missed, in a goroutine of its own, which reach the handler as late.
func (r *Receiver) Receive(ctx context.Context, header http.Header, body []byte) (Verdict, error) {
	trace := ParseTraceparent(header.Get("traceparent"))
	event, err := required(header, "svc-event")
	if err != nil {
		return Verdict{}, err
	}
	if event == "ping" {
		return Verdict{Outcome: OutcomePing, Trace: trace}, nil
	}
	sig, err := required(header, "svc-signature")
	if err != nil {
		return Verdict{}, err
	}
	webhookID, err := required(header, "svc-webhook")
	if err != nil {
		return Verdict{}, err
	}
	if r.webhookID != "" && webhookID != r.webhookID {
		return Verdict{}, &Error{ErrOtherWebhook, fmt.Sprintf("SVC-Webhook is %s, not %s", webhookID, r.webhookID)}
	}
	if !Verify(body, sig, r.secrets) {
		return Verdict{}, &Error{ErrInvalidSignature, "SVC-Signature does not match the body under any of the secrets"}
	}
	test := header.Get("svc-test") == "1"
	leastCursor := 1.0
	if test {
		leastCursor = testCursor
	}
	delivery, err := parseDelivery(body, event, webhookID, header.Get("svc-delivery"), leastCursor)
	if err != nil {
		return Verdict{}, err
	}
	if test {
		return Verdict{Outcome: OutcomeTest, Delivery: delivery, Trace: trace}, nil
	}
	verdict, err := r.judge(ctx, delivery, trace, ViaPush)
	if err == nil && verdict.Gap != nil && r.feed != nil {
		// Past the request: ctx's values, not its end.
		go r.fillGap(context.WithoutCancel(ctx), delivery.ListID, *verdict.Gap)
	}
	return verdict, err
}

// judge marks a delivery seen, tells new from late and duplicate, and hands a first sight to
// the handler.
func (r *Receiver) judge(ctx context.Context, delivery *Delivery, trace *TraceContext, via Via) (Verdict, error) {
	isNew, err := r.store.MarkSeen(ctx, keyOf(delivery))
	if err != nil {
		return Verdict{}, err
	}
	verdict := Verdict{Outcome: OutcomeNew, Delivery: delivery, Trace: trace}
	if !isNew {
		verdict.Outcome = OutcomeDuplicate
		return verdict, nil
	}
	if delivery.Event == ListChanged {
		previous, found, err := r.store.AdvanceCursor(ctx, delivery.WebhookID, delivery.ListID, delivery.Cursor)
		if err != nil {
			return Verdict{}, err
		}
		if found && delivery.Cursor < previous {
			verdict.Outcome = OutcomeLate
		} else if found && delivery.Cursor > previous+1 {
			verdict.Gap = &Gap{First: previous + 1, Last: delivery.Cursor - 1}
		}
	}
	if r.handler != nil {
		if err := r.handler(ctx, verdict, via); err != nil {
			return Verdict{}, errors.Join(err, r.Forget(ctx, delivery))
		}
	}
	return verdict, nil
}

// Forget unmarks a delivery you could not accept (answer it 5xx): when it comes again, by a
// redelivery, it is new.
func (r *Receiver) Forget(ctx context.Context, delivery *Delivery) error {
	return r.store.Forget(ctx, keyOf(delivery))
}

func keyOf(delivery *Delivery) SeenKey {
	return SeenKey{WebhookID: delivery.WebhookID, ListID: delivery.ListID, Event: delivery.Event, Cursor: delivery.Cursor}
}

// required returns a header that must be there and not empty.
func required(header http.Header, name string) (string, error) {
	value := header.Get(name)
	if value == "" {
		return "", &Error{ErrMissingHeader, "the request has no " + name + " header"}
	}
	return value, nil
}

func parseDelivery(body []byte, headerEvent, webhookID, deliveryID string, leastCursor float64) (*Delivery, error) {
	invalid := func(message string) error { return &Error{ErrInvalidBody, message} }
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, invalid("the body is not JSON in UTF-8")
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		return nil, invalid("the body is not a JSON object")
	}
	var event, listID, at string
	if !jsonString(fields["event"], &event) || event == "" {
		return nil, invalid("`event` is not a non-empty string")
	}
	if !jsonString(fields["listId"], &listID) || listID == "" {
		return nil, invalid("`listId` is not a non-empty string")
	}
	// JSON has one number type: 7 and 7.0 are the same cursor, as in the other two libraries.
	var cursor float64
	if json.Unmarshal(fields["cursor"], &cursor) != nil || cursor != math.Trunc(cursor) || cursor < leastCursor || cursor > MaxCursor {
		return nil, invalid(fmt.Sprintf("`cursor` is not an integer from %d to %d", int64(leastCursor), int64(MaxCursor)))
	}
	if !jsonString(fields["at"], &at) {
		return nil, invalid("`at` is not a string")
	}
	if event != headerEvent {
		return nil, invalid(fmt.Sprintf("the signed body's event is %s, SVC-Event says %s", event, headerEvent))
	}
	return &Delivery{WebhookID: webhookID, DeliveryID: deliveryID, Event: event, ListID: listID, Cursor: int64(cursor), At: at}, nil
}

// jsonString decodes raw into target only when raw is a JSON string (not null, which Go would take).
func jsonString(raw json.RawMessage, target *string) bool {
	return len(raw) > 0 && bytes.HasPrefix(raw, []byte(`"`)) && json.Unmarshal(raw, target) == nil
}
