package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Via says how an event reached the handler.
type Via string

const (
	// ViaPush is an event the service pushed, judged by Receive.
	ViaPush Via = "push"
	// ViaPull is an event pulled from the service's feed, by CatchUp or ReceiveItem.
	ViaPull Via = "pull"
)

// Handler is the receiver's own handling of an event, for pushed and pulled ones alike: it is
// given a new or late verdict and how it came. When it returns an error, the event is
// forgotten (it counts as new when it comes again) and the error goes on.
type Handler func(ctx context.Context, verdict Verdict, via Via) error

// Feed is where CatchUp pulls from: the service's API, with a token that has the scope
// deliveries:read.
type Feed struct {
	// BaseURL is the API's base URL, e.g. https://webhooks.example.com.
	BaseURL string
	Token   string
	// Limit is the items per page, 1 to 500; 0 for 100.
	Limit int
	// Client makes the requests; nil for http.DefaultClient. Its Timeout, if any, must exceed
	// the 30 s a followed request may be held.
	Client *http.Client
	// OnError is told when pulling a gap in the background fails (the feed, the store or the
	// handler); nil logs it with package log.
	OnError func(error)
}

func (f *Feed) limit() int {
	if f.Limit == 0 {
		return defaultPage
	}
	return f.Limit
}

// FeedItem is one item of the feed, GET /v3/webhooks/{id}/events: an event delivery as the
// push carries it, and where it is in the feed.
type FeedItem struct {
	Position string `json:"position"`
	// DeliveryID is the SVC-Delivery id its push carries.
	DeliveryID string `json:"deliveryId"`
	Event      string `json:"event"`
	ListID     string `json:"listId"`
	Cursor     int64  `json:"cursor"`
	At         string `json:"at"`
}

// FeedError is the feed's answer other than 200: Code is the API's error code
// (POSITION_EXPIRED: the stored position is older than anything kept).
type FeedError struct {
	Status  int
	Code    string
	Message string
	// OldestPosition, with POSITION_EXPIRED, is the oldest position kept.
	OldestPosition string
}

func (e *FeedError) Error() string {
	return fmt.Sprintf("the feed answered %d %s: %s", e.Status, e.Code, e.Message)
}

// defaultPage is the feed's page size unless Feed.Limit says otherwise.
const defaultPage = 100

// followWaitSeconds is the longest the feed holds a request (its wait).
const followWaitSeconds = 30

// gapFillSeconds is how long a gap is pulled for at most, and gapPollSeconds how long each of
// its requests may be held.
const (
	gapFillSeconds = 30
	gapPollSeconds = 1
)

// ReceiveItem judges one item of the feed as CatchUp does, for a receiver that pulls the feed
// itself: the same delivery as its push (same webhook, list, event and cursor), so whichever
// comes second is a duplicate. Items come over the authenticated API, unsigned: they are
// trusted by the token that fetched them, and name the receiver's WebhookID, which it needs.
func (r *Receiver) ReceiveItem(ctx context.Context, item FeedItem) (Verdict, error) {
	if r.webhookID == "" {
		return Verdict{}, errors.New("receiver: ReceiveItem needs a WebhookID")
	}
	delivery := &Delivery{r.webhookID, item.DeliveryID, item.Event, item.ListID, item.Cursor, item.At}
	return r.judge(ctx, delivery, nil, ViaPull)
}

// CatchUp pulls the feed from the position the store keeps, page after page, judges each item
// (ReceiveItem) and stores the position after each page; it returns, with the number of events
// handed to the handler, at the first page that is not full. With follow, it goes on, each
// request held up to 30 s while nothing is new, until ctx is done (then it returns ctx's
// error). Safe beside Receive and another CatchUp: the store tells every delivery once, and an
// item pulled twice is a duplicate.
func (r *Receiver) CatchUp(ctx context.Context, follow bool) (int, error) {
	if r.feed == nil {
		return 0, errors.New("receiver: CatchUp needs a Feed")
	}
	limit := r.feed.limit()
	return r.pull(ctx, func(page *feedPage) (int, bool) {
		if follow {
			return followWaitSeconds, true
		}
		return 0, len(page.Data) == limit
	})
}

// fillGap pulls until the feed has brought every cursor of the gap, or gapFillSeconds have
// passed (the next CatchUp then fills it): a write's item becomes readable a moment after its
// push may have come, and the writes of a list made while the account was not a member of it
// are in no feed. Receive runs it in a goroutine of its own; a failure goes to Feed.OnError.
func (r *Receiver) fillGap(ctx context.Context, listID string, gap Gap) {
	limit := r.feed.limit()
	covered := map[int64]bool{}
	deadline := time.Now().Add(gapFillSeconds * time.Second)
	_, err := r.pull(ctx, func(page *feedPage) (int, bool) {
		for _, item := range page.Data {
			if item.Event == ListChanged && item.ListID == listID && item.Cursor >= gap.First && item.Cursor <= gap.Last {
				covered[item.Cursor] = true
			}
		}
		if int64(len(covered)) == gap.Last-gap.First+1 || time.Now().After(deadline) {
			return 0, false
		}
		if len(page.Data) < limit {
			return gapPollSeconds, true
		}
		return 0, true
	})
	if err != nil {
		onError := r.feed.OnError
		if onError == nil {
			onError = func(err error) {
				log.Printf("receiver: filling the gap %d to %d of list %s failed: %v", gap.First, gap.Last, listID, err)
			}
		}
		onError(err)
	}
}

// pull asks for pages from the stored position, judges each item and stores the position after
// each page, while then (given each page) answers the seconds the next request may be held and
// true; it returns the number of events handed to the handler.
func (r *Receiver) pull(ctx context.Context, then func(page *feedPage) (wait int, more bool)) (int, error) {
	handed, wait := 0, 0
	for more := true; more; {
		after, err := r.store.Position(ctx, r.webhookID)
		if err != nil {
			return handed, err
		}
		page, err := r.fetchPage(ctx, after, r.feed.limit(), wait)
		if err != nil {
			return handed, err
		}
		for _, item := range page.Data {
			verdict, err := r.ReceiveItem(ctx, item)
			if err != nil {
				return handed, err
			}
			if verdict.Outcome != OutcomeDuplicate {
				handed++
			}
		}
		if page.Next != nil && *page.Next != after {
			if err := r.store.SavePosition(ctx, r.webhookID, *page.Next); err != nil {
				return handed, err
			}
		}
		wait, more = then(page)
	}
	return handed, nil
}

type feedPage struct {
	Data []FeedItem `json:"data"`
	Next *string    `json:"next"`
}

// fetchPage asks for one page of the feed after after (from the oldest kept when ""), held up to
// wait seconds while it is empty.
func (r *Receiver) fetchPage(ctx context.Context, after string, limit, wait int) (*feedPage, error) {
	query := url.Values{"limit": {strconv.Itoa(limit)}}
	if after != "" {
		query.Set("after", after)
	}
	if wait > 0 {
		query.Set("wait", strconv.Itoa(wait))
	}
	address := strings.TrimSuffix(r.feed.BaseURL, "/") + "/v3/webhooks/" + url.PathEscape(r.webhookID) + "/events?" + query.Encode()
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, address, nil)
	if err != nil {
		return nil, err
	}
	request.Header.Set("Authorization", "Bearer "+r.feed.Token)
	request.Header.Set("Accept", "application/json")
	client := r.feed.Client
	if client == nil {
		client = http.DefaultClient
	}
	response, err := client.Do(request)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		var envelope struct {
			Error struct {
				Code           string `json:"code"`
				Message        string `json:"message"`
				OldestPosition string `json:"oldestPosition"`
			} `json:"error"`
		}
		_ = json.NewDecoder(response.Body).Decode(&envelope) // an answer without the envelope still fails, by its status
		e := envelope.Error
		return nil, &FeedError{Status: response.StatusCode, Code: e.Code, Message: e.Message, OldestPosition: e.OldestPosition}
	}
	var page feedPage
	if err := json.NewDecoder(response.Body).Decode(&page); err != nil {
		return nil, err
	}
	return &page, nil
}
