package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"reflect"
	"testing"
)

type signatureCase struct {
	Name    string   `json:"name"`
	Body    string   `json:"body"`
	Secrets []string `json:"secrets"`
	Header  *string  `json:"header"`
	Valid   bool     `json:"valid"`
}

// streamDelivery is a request, or with Pulled an item of the feed.
type streamDelivery struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Pulled  *FeedItem         `json:"pulled"`
	Forget  bool              `json:"forget"`
	Expect  map[string]any    `json:"expect"`
}

type streamCase struct {
	Name       string           `json:"name"`
	Secrets    []string         `json:"secrets"`
	WebhookID  *string          `json:"webhookId"`
	Deliveries []streamDelivery `json:"deliveries"`
}

type traceContextCase struct {
	Name   string         `json:"name"`
	Header *string        `json:"header"`
	Expect map[string]any `json:"expect"`
}

type vectorFile struct {
	Signatures    []signatureCase    `json:"signatures"`
	Streams       []streamCase       `json:"streams"`
	TraceContexts []traceContextCase `json:"traceContexts"`
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	// Printed afresh by the generator, with secrets of this run's own.
	raw, err := exec.Command("python3", "../vectors/generate.py").Output()
	if err != nil {
		t.Fatal(err)
	}
	var vectors vectorFile
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	return vectors
}

func headerOf(headers map[string]string) http.Header {
	header := http.Header{}
	for name, value := range headers {
		header.Set(name, value)
	}
	return header
}

// traceOf gives a trace context in the vectors' terms.
func traceOf(trace *TraceContext) map[string]any {
	if trace == nil {
		return nil
	}
	return map[string]any{"traceId": trace.TraceID, "parentId": trace.ParentID, "sampled": trace.Sampled}
}

// judge gives a verdict in the vectors' terms: the outcome, the gap of a new one, the trace
// context if any, or the error's code.
func judge(t *testing.T, r *Receiver, delivery streamDelivery) map[string]any {
	t.Helper()
	ctx := context.Background()
	var verdict Verdict
	var err error
	if delivery.Pulled != nil {
		verdict, err = r.ReceiveItem(ctx, *delivery.Pulled)
	} else {
		verdict, err = r.Receive(ctx, headerOf(delivery.Headers), []byte(delivery.Body))
	}
	var refused *Error
	if errors.As(err, &refused) {
		return map[string]any{"error": string(refused.Code)}
	}
	if err != nil {
		t.Fatal(err)
	}
	if delivery.Forget && verdict.Delivery != nil {
		if err := r.Forget(ctx, verdict.Delivery); err != nil {
			t.Fatal(err)
		}
	}
	judged := map[string]any{"outcome": string(verdict.Outcome)}
	if verdict.Outcome == OutcomeNew {
		var gap any
		if verdict.Gap != nil {
			gap = map[string]any{"first": float64(verdict.Gap.First), "last": float64(verdict.Gap.Last)}
		}
		judged["gap"] = gap
	}
	if verdict.Trace != nil {
		judged["trace"] = traceOf(verdict.Trace)
	}
	return judged
}

func TestSignatureVectors(t *testing.T) {
	for _, c := range loadVectors(t).Signatures {
		t.Run(c.Name, func(t *testing.T) {
			header := ""
			if c.Header != nil {
				header = *c.Header
			}
			if got := Verify([]byte(c.Body), header, c.Secrets); got != c.Valid {
				t.Errorf("Verify = %v, want %v", got, c.Valid)
			}
		})
	}
}

func TestStreamVectors(t *testing.T) {
	for _, stream := range loadVectors(t).Streams {
		t.Run(stream.Name, func(t *testing.T) {
			config := Config{Secrets: stream.Secrets}
			if stream.WebhookID != nil {
				config.WebhookID = *stream.WebhookID
			}
			r := New(config)
			for i, delivery := range stream.Deliveries {
				if got := judge(t, r, delivery); !reflect.DeepEqual(got, delivery.Expect) {
					t.Errorf("delivery %d: got %v, want %v", i, got, delivery.Expect)
				}
			}
		})
	}
}

func TestTraceContextVectors(t *testing.T) {
	for _, c := range loadVectors(t).TraceContexts {
		t.Run(c.Name, func(t *testing.T) {
			header := ""
			if c.Header != nil {
				header = *c.Header
			}
			if got := traceOf(ParseTraceparent(header)); !reflect.DeepEqual(got, c.Expect) {
				t.Errorf("ParseTraceparent = %v, want %v", got, c.Expect)
			}
			// A ping needs no secret: its headers alone make a verdict.
			ping := http.Header{}
			ping.Set("SVC-Event", "ping")
			if c.Header != nil {
				ping.Set("traceparent", *c.Header)
			}
			verdict, err := New(Config{}).Receive(context.Background(), ping, nil)
			if got := traceOf(verdict.Trace); err != nil || !reflect.DeepEqual(got, c.Expect) {
				t.Errorf("a ping's trace = %v %v, want %v", got, err, c.Expect)
			}
		})
	}
}

func TestReceiveReturnsTheDeliveryWithItsHeaders(t *testing.T) {
	stream := loadVectors(t).Streams[0]
	first := stream.Deliveries[0]
	verdict, err := New(Config{Secrets: stream.Secrets}).Receive(context.Background(), headerOf(first.Headers), []byte(first.Body))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Event, ListID, At string
		Cursor            int64
	}
	if err := json.Unmarshal([]byte(first.Body), &body); err != nil {
		t.Fatal(err)
	}
	want := &Delivery{first.Headers["svc-webhook"], first.Headers["svc-delivery"], body.Event, body.ListID, body.Cursor, body.At}
	if verdict.Outcome != OutcomeNew || verdict.Gap != nil || !reflect.DeepEqual(verdict.Delivery, want) {
		t.Errorf("got %+v %+v, want new %+v", verdict, verdict.Delivery, want)
	}
}

func TestReceiveSaysWhichHeaderIsMissing(t *testing.T) {
	stream := loadVectors(t).Streams[0]
	header := headerOf(stream.Deliveries[0].Headers)
	header.Del("SVC-Webhook")
	_, err := New(Config{Secrets: stream.Secrets}).Receive(context.Background(), header, []byte(stream.Deliveries[0].Body))
	if err == nil || err.Error() != "missing_header: the request has no svc-webhook header" {
		t.Errorf("got %v", err)
	}
}

// failingStore fails every call, as a database that is down would.
type failingStore struct{ *MemoryStore }

var errStoreDown = errors.New("store down")

func (failingStore) MarkSeen(context.Context, SeenKey) (bool, error) { return false, errStoreDown }

func TestReceivePassesOnTheStoresErrors(t *testing.T) {
	stream := loadVectors(t).Streams[0]
	first := stream.Deliveries[0]
	r := New(Config{Secrets: stream.Secrets, Store: failingStore{NewMemoryStore()}})
	_, err := r.Receive(context.Background(), headerOf(first.Headers), []byte(first.Body))
	var refused *Error
	if !errors.Is(err, errStoreDown) || errors.As(err, &refused) {
		t.Errorf("got %v, want the store's error", err)
	}
}

func TestReceiversSharingAStoreShareWhatTheySaw(t *testing.T) {
	stream := loadVectors(t).Streams[0]
	first := stream.Deliveries[0]
	store := NewMemoryStore()
	ctx := context.Background()
	if _, err := New(Config{Secrets: stream.Secrets, Store: store}).Receive(ctx, headerOf(first.Headers), []byte(first.Body)); err != nil {
		t.Fatal(err)
	}
	// Another receiver on the same store (another process, after a restart) knows what it saw.
	verdict, err := New(Config{Secrets: stream.Secrets, Store: store}).Receive(ctx, headerOf(first.Headers), []byte(first.Body))
	if err != nil || verdict.Outcome != OutcomeDuplicate {
		t.Errorf("got %v %v, want duplicate", verdict.Outcome, err)
	}
}
