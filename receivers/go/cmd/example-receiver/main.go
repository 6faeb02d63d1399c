// Command example-receiver is an example webhook receiver (docs/receiving.md) written with
// package receiver, as receivers/typescript/example-receiver.mjs and
// receivers/python/example_receiver.py are with theirs:
//
//	WEBHOOK_SECRETS=whsec_new,whsec_old SEEN_STATE_FILE=seen.jsonl TLS_CERT=cert.pem TLS_KEY=key.pem \
//	  PORT=8443 go run ./cmd/example-receiver
//
// WEBHOOK_SECRETS holds one secret, or several (comma-separated) while one replaces another;
// WEBHOOK_ID, if set, is the only SVC-Webhook accepted. With SVC_API_URL and SVC_API_TOKEN (a
// token with deliveries:read) and WEBHOOK_ID, it catches up from the webhook's feed once it
// listens, then serves pushes, and pulls what a cursor gap says it missed. Without TLS_CERT and
// TLS_KEY it serves plain HTTP, for behind an HTTPS terminator. It prints {"listening": port},
// then one JSON line per event handed to its handler (with "via": "push" or "pull") and per
// other verdict or refused request, and {"caughtUp": n} when the catch-up at start is done: the
// verdict with the delivery's trace id (null when it came without a valid traceparent), or the
// error that refused it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"svcwebhooks/receiver"
)

const maxBodyBytes = 64 << 10

// pingLine is the JSON line of a ping's verdict, which carries no delivery.
type pingLine struct {
	Outcome receiver.Outcome `json:"outcome"`
	TraceID *string          `json:"traceId"`
}

// verdictLine is the JSON line of a delivery's verdict: its outcome, trace id and the delivery's fields.
type verdictLine struct {
	Outcome    receiver.Outcome `json:"outcome"`
	TraceID    *string          `json:"traceId"`
	WebhookID  string           `json:"webhookId"`
	DeliveryID string           `json:"deliveryId"`
	Event      string           `json:"event"`
	ListID     string           `json:"listId"`
	Cursor     int64            `json:"cursor"`
	At         string           `json:"at"`
	Gap        *gap             `json:"gap"`
	Via        receiver.Via     `json:"via,omitempty"`
}

type errorLine struct {
	Error   receiver.ErrorCode `json:"error"`
	Message string             `json:"message"`
}

type gap struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) print(value any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := json.NewEncoder(p.w).Encode(value); err != nil {
		log.Print(err)
	}
}

// describe is one JSON line's worth: the verdict with its delivery's fields and trace id.
func describe(verdict receiver.Verdict) any {
	var traceID *string
	if verdict.Trace != nil {
		traceID = &verdict.Trace.TraceID
	}
	d := verdict.Delivery
	if d == nil {
		return pingLine{verdict.Outcome, traceID}
	}
	line := verdictLine{verdict.Outcome, traceID, d.WebhookID, d.DeliveryID, d.Event, d.ListID, d.Cursor, d.At, nil, ""}
	if verdict.Gap != nil {
		line.Gap = &gap{verdict.Gap.First, verdict.Gap.Last}
	}
	return line
}

// printEvents is the receiver's handler: it prints every event, pushed or pulled, once.
func printEvents(out *printer) receiver.Handler {
	return func(_ context.Context, verdict receiver.Verdict, via receiver.Via) error {
		line := describe(verdict).(verdictLine)
		line.Via = via
		out.print(line)
		return nil
	}
}

// handler judges every request with r, whose handler has the events, and prints the rest
// before it answers.
func handler(r *receiver.Receiver, out *printer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Verify the raw bytes as received: the library parses them only once they are verified.
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		verdict, err := r.Receive(req.Context(), req.Header, body)
		var refused *receiver.Error
		switch {
		case errors.As(err, &refused):
			out.print(errorLine{refused.Code, refused.Message})
			if refused.Code == receiver.ErrInvalidSignature {
				w.WriteHeader(http.StatusUnauthorized)
			} else {
				w.WriteHeader(http.StatusBadRequest)
			}
		case err != nil:
			log.Print(err)
			w.WriteHeader(http.StatusInternalServerError)
		default:
			if verdict.Outcome != receiver.OutcomeNew && verdict.Outcome != receiver.OutcomeLate {
				out.print(describe(verdict))
			}
			// Answer quickly (the service waits at most DELIVERY_TIMEOUT_MS); do slow work afterwards.
			// A duplicate is answered 2xx too: it was handled when it first came.
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

func main() {
	var store receiver.SeenStore
	if path := os.Getenv("SEEN_STATE_FILE"); path != "" {
		fileStore, err := openFileStore(path)
		if err != nil {
			log.Fatal(err)
		}
		store = fileStore
	}
	var secrets []string
	for _, secret := range strings.Split(os.Getenv("WEBHOOK_SECRETS"), ",") {
		if secret != "" {
			secrets = append(secrets, secret)
		}
	}
	out := &printer{w: os.Stdout}
	config := receiver.Config{Secrets: secrets, Store: store, WebhookID: os.Getenv("WEBHOOK_ID"), Handler: printEvents(out)}
	if apiURL := os.Getenv("SVC_API_URL"); apiURL != "" {
		config.Feed = &receiver.Feed{BaseURL: apiURL, Token: os.Getenv("SVC_API_TOKEN")}
	}
	r := receiver.New(config)

	port := os.Getenv("PORT")
	if port == "" {
		port = "8443"
	}
	listener, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatal(err)
	}
	out.print(map[string]int{"listening": listener.Addr().(*net.TCPAddr).Port})
	if config.Feed != nil {
		// Pushes are served meanwhile: the store tells each event once, whichever way it comes first.
		go func() {
			caughtUp, err := r.CatchUp(context.Background(), false)
			if err != nil {
				log.Print(err)
				return
			}
			out.print(map[string]int{"caughtUp": caughtUp})
		}()
	}
	server := &http.Server{Handler: handler(r, out)}
	if cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"); cert != "" && key != "" {
		err = server.ServeTLS(listener, cert, key)
	} else {
		err = server.Serve(listener)
	}
	log.Fatal(err)
}
