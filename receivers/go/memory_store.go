package receiver

import (
	"context"
	"sync"
)

type listKey struct{ webhookID, listID string }

// MemoryStore is the default SeenStore: in this process's memory, for as long as it runs. It
// keeps every key it is given. Safe for concurrent use.
type MemoryStore struct {
	mu        sync.Mutex
	seen      map[SeenKey]struct{}
	highest   map[listKey]int64
	positions map[string]string
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{seen: map[SeenKey]struct{}{}, highest: map[listKey]int64{}, positions: map[string]string{}}
}

func (s *MemoryStore) MarkSeen(_ context.Context, key SeenKey) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.seen[key]; seen {
		return false, nil
	}
	s.seen[key] = struct{}{}
	return true, nil
}

func (s *MemoryStore) Forget(_ context.Context, key SeenKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, key)
	return nil
}

func (s *MemoryStore) AdvanceCursor(_ context.Context, webhookID, listID string, cursor int64) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := listKey{webhookID, listID}
	previous, found := s.highest[key]
	if !found || cursor > previous {
		s.highest[key] = cursor
	}
	return previous, found, nil
}

func (s *MemoryStore) Position(_ context.Context, webhookID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.positions[webhookID], nil
}

func (s *MemoryStore) SavePosition(_ context.Context, webhookID, position string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if position == "" {
		delete(s.positions, webhookID)
	} else {
		s.positions[webhookID] = position
	}
	return nil
}
