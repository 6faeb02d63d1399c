package receiver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"svcwebhooks/receiver"
)

// Three requests as the service sends them: list.changed at cursor 1, then at cursor 4 (the
// writes at 2 and 3 missed), then cursor 4 again (a redelivery).
func ExampleReceiver_Receive() {
	r := receiver.New(receiver.Config{Secrets: []string{"whsec_MfKQ9r2AbXwJ5dTq8ZyL3nVc6HsE1uGp4oRk7iYt0xW"}})
	requests := []struct{ body, signature string }{
		{`{"event":"list.changed","listId":"groceries","cursor":1,"at":"2026-11-21T10:00:00.000Z"}`,
			"sha256=8d760b16e968a2b5564fd702f551384af30a9f4356deb0e2987288504f9205de"},
		{`{"event":"list.changed","listId":"groceries","cursor":4,"at":"2026-11-21T10:00:00.000Z"}`,
			"sha256=485947556781d51f4f2536236e22ef23884a8ab197fc631e7b73cf88b0fca8ae"},
		{`{"event":"list.changed","listId":"groceries","cursor":4,"at":"2026-11-21T10:00:00.000Z"}`,
			"sha256=485947556781d51f4f2536236e22ef23884a8ab197fc631e7b73cf88b0fca8ae"},
	}
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
