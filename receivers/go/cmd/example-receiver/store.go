package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"

	"svcwebhooks/receiver"
)

// fileStore is a SeenStore kept in a file, so that gaps and duplicates are told across
// restarts: the library's MemoryStore, with every change appended to the file as a JSON line
// and replayed at start. An example for one process: a production receiver keeps this in its
// database.
type fileStore struct {
	// mu is held across each change and its line, so that the file has them in the order they were made.
	mu     sync.Mutex
	memory *receiver.MemoryStore
	file   *os.File
}

type change struct {
	MarkSeen      *receiver.SeenKey `json:"markSeen,omitempty"`
	Forget        *receiver.SeenKey `json:"forget,omitempty"`
	AdvanceCursor *cursorChange     `json:"advanceCursor,omitempty"`
	SavePosition  *positionChange   `json:"savePosition,omitempty"`
}

type positionChange struct {
	WebhookID, Position string
}

type cursorChange struct {
	WebhookID, ListID string
	Cursor            int64
}

func openFileStore(path string) (*fileStore, error) {
	store := &fileStore{memory: receiver.NewMemoryStore()}
	if err := store.replay(path); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	store.file = file
	return store, nil
}

func (s *fileStore) replay(path string) error {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	ctx := context.Background()
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		var c change
		if err := json.Unmarshal(lines.Bytes(), &c); err != nil {
			return err
		}
		switch {
		case c.MarkSeen != nil:
			_, err = s.memory.MarkSeen(ctx, *c.MarkSeen)
		case c.Forget != nil:
			err = s.memory.Forget(ctx, *c.Forget)
		case c.AdvanceCursor != nil:
			_, _, err = s.memory.AdvanceCursor(ctx, c.AdvanceCursor.WebhookID, c.AdvanceCursor.ListID, c.AdvanceCursor.Cursor)
		case c.SavePosition != nil:
			err = s.memory.SavePosition(ctx, c.SavePosition.WebhookID, c.SavePosition.Position)
		}
		if err != nil {
			return err
		}
	}
	return lines.Err()
}

func (s *fileStore) append(c change) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.file.Write(append(line, '\n'))
	return err
}

func (s *fileStore) MarkSeen(ctx context.Context, key receiver.SeenKey) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	isNew, err := s.memory.MarkSeen(ctx, key)
	if err != nil || !isNew {
		return isNew, err
	}
	return true, s.append(change{MarkSeen: &key})
}

func (s *fileStore) Forget(ctx context.Context, key receiver.SeenKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.memory.Forget(ctx, key); err != nil {
		return err
	}
	return s.append(change{Forget: &key})
}

func (s *fileStore) AdvanceCursor(ctx context.Context, webhookID, listID string, cursor int64) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	previous, found, err := s.memory.AdvanceCursor(ctx, webhookID, listID, cursor)
	if err != nil || (found && cursor <= previous) {
		return previous, found, err
	}
	return previous, found, s.append(change{AdvanceCursor: &cursorChange{webhookID, listID, cursor}})
}

func (s *fileStore) Position(ctx context.Context, webhookID string) (string, error) {
	return s.memory.Position(ctx, webhookID)
}

func (s *fileStore) SavePosition(ctx context.Context, webhookID, position string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.memory.SavePosition(ctx, webhookID, position); err != nil {
		return err
	}
	return s.append(change{SavePosition: &positionChange{webhookID, position}})
}
