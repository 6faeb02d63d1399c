package receiver_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"svcwebhooks/receiver"
)

// Three requests as the service sends them: list.changed at cursor 1, then at cursor 4 (the
// writes at 2 and 3 missed), then cursor 4 again (a redelivery).
func ExampleReceiver_Receive() {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err)
	}
	secret := "whsec_" + base64.RawURLEncoding.EncodeToString(key)
	r := receiver.New(receiver.Config{Secrets: []string{secret}})
	// Signed as the service signs them: HMAC-SHA256 of the exact body with the secret, in hex.
	sign := func(body string) string {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		return "sha256=" + hex.EncodeToString(mac.Sum(nil))
	}
	first := `{"event":"list.changed","listId":"groceries","cursor":1,"at":"2026-11-21T10:00:00.000Z"}`
	fourth := `{"event":"list.changed","listId":"groceries","cursor":4,"at":"2026-11-21T10:00:00.000Z"}`
	requests := []struct{ body, signature string }{{first, sign(first)}, {fourth, sign(fourth)}, {fourth, sign(fourth)}}
	for _, request := range requests {
		header := http.Header{}
		header.Set("SVC-Event", "list.changed")
		header.Set("SVC-Webhook", "wh_0123456789abcdef01234567")
		header.Set("SVC-Signature", request.signature)
		verdict, err := r.Receive(context.Background(), header, []byte(request.body))
		var refused *receiver.Error
		if errors.As(err, &refused) {
			fmt.Println("refused:", refused.Code) // answer 401 for invalid_signature, 400 otherwise
			continue
		}
		if err != nil {
			fmt.Println("the store failed:", err) // answer 500
			continue
		}
		switch {
		case verdict.Outcome == receiver.OutcomeDuplicate:
			fmt.Println("already seen: cursor", verdict.Delivery.Cursor)
		case verdict.Gap != nil:
			fmt.Printf("cursor %d; missed %d to %d: refetch the list\n", verdict.Delivery.Cursor, verdict.Gap.First, verdict.Gap.Last)
		default:
			fmt.Println(verdict.Outcome, "cursor", verdict.Delivery.Cursor)
		}
	}
	// Output:
	// new cursor 1
	// cursor 4; missed 2 to 3: refetch the list
	// already seen: cursor 4
}
