package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"svcwebhooks/receiver"
)

// A secret of this run's own, as the service makes them: whsec_ and 32 random bytes.
var secret = func() string {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err)
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(key)
}()

const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

// post sends a list.changed delivery at cursor, signed with signature or, if "", as the service
// signs it; traced adds a traceparent.
func post(t *testing.T, handler http.Handler, cursor string, signature string, traced bool) int {
	t.Helper()
	body := `{"event":"list.changed","listId":"l1","cursor":` + cursor + `,"at":"2026-11-21T10:00:00.000Z"}`
	if signature == "" {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		signature = "sha256=" + hex.EncodeToString(mac.Sum(nil))
	}
	request := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	request.Header.Set("SVC-Event", "list.changed")
	request.Header.Set("SVC-Webhook", "wh_0123456789abcdef01234567")
	request.Header.Set("SVC-Signature", signature)
	if traced {
		request.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	}
	response := httptest.NewRecorder()
	handler.ServeHTTP(response, request)
	return response.Code
}

func lines(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var parsed []map[string]any
	for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(text), &line); err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, line)
	}
	return parsed
}

func TestTheHandlerAnswersAndPrintsEachVerdict(t *testing.T) {
	var out bytes.Buffer
	p := &printer{w: &out}
	handler := handler(receiver.New(receiver.Config{Secrets: []string{secret}, Handler: printEvents(p)}), p)
	codes := []int{post(t, handler, "7", "", true), post(t, handler, "7", "", false), post(t, handler, "7", "sha256=00", false)}
	if codes[0] != http.StatusNoContent || codes[1] != http.StatusNoContent || codes[2] != http.StatusUnauthorized {
		t.Errorf("answered %v", codes)
	}
	got := lines(t, &out)
	if got[0]["outcome"] != "new" || got[0]["cursor"] != 7.0 || got[0]["via"] != "push" || got[1]["outcome"] != "duplicate" || got[2]["error"] != "invalid_signature" {
		t.Errorf("printed %v", got)
	}
	// Without a traceparent, the line says so with null.
	if untraced, printed := got[1]["traceId"]; got[0]["traceId"] != traceID || !printed || untraced != nil {
		t.Errorf("printed the trace ids %v", got)
	}
}

func TestTheFileStoreKeepsWhatWasSeenAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seen.jsonl")
	var out bytes.Buffer
	p := &printer{w: &out}
	for _, cursor := range []string{"7", "7", "10"} {
		store, err := openFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		post(t, handler(receiver.New(receiver.Config{Secrets: []string{secret}, Store: store, Handler: printEvents(p)}), p), cursor, "", false)
		store.file.Close()
	}
	got := lines(t, &out)
	gap, _ := got[2]["gap"].(map[string]any)
	if got[0]["outcome"] != "new" || got[1]["outcome"] != "duplicate" || got[2]["outcome"] != "new" || gap["first"] != 8.0 || gap["last"] != 9.0 {
		t.Errorf("printed %v", got)
	}
}
