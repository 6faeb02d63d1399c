// Command example-receiver is an example webhook receiver (docs/receiving.md) written with
// package receiver, as receivers/typescript/example-receiver.mjs and
// receivers/python/example_receiver.py are with theirs:
//
//	WEBHOOK_SECRETS=whsec_new,whsec_old SEEN_STATE_FILE=seen.jsonl TLS_CERT=cert.pem TLS_KEY=key.pem \
//	  PORT=8443 go run ./cmd/example-receiver
//
// WEBHOOK_SECRETS holds one secret, or several (comma-separated) while one replaces another;
// WEBHOOK_ID, if set, is the only SVC-Webhook accepted. Without TLS_CERT and TLS_KEY it serves
// plain HTTP, for behind an HTTPS terminator. It prints {"listening": port}, then one JSON line
// per request: the verdict with the delivery's trace id (null when it came without a valid
// traceparent), or the error that refused it.
package main

import (
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
	line := verdictLine{verdict.Outcome, traceID, d.WebhookID, d.DeliveryID, d.Event, d.ListID, d.Cursor, d.At, nil}
	if verdict.Gap != nil {
		line.Gap = &gap{verdict.Gap.First, verdict.Gap.Last}
	}
	return line
}

// handler judges every request with r and prints its verdict before it answers.
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
			out.print(describe(verdict))
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
	r := receiver.New(receiver.Config{Secrets: secrets, Store: store, WebhookID: os.Getenv("WEBHOOK_ID")})

	port := os.Getenv("PORT")
	if port == "" {
		port = "8443"
	}
	listener, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatal(err)
	}
	out := &printer{w: os.Stdout}
	out.print(map[string]int{"listening": listener.Addr().(*net.TCPAddr).Port})
	server := &http.Server{Handler: handler(r, out)}
	if cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"); cert != "" && key != "" {
		err = server.ServeTLS(listener, cert, key)
	} else {
		err = server.Serve(listener)
	}
	log.Fatal(err)
}
