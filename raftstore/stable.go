package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sievekv/sievekv/kv"
)

// Set stores key = val in the stable store, durably when it returns (R3).
func (s *Store) Set(key, val []byte) error {
	if err := s.db.Set(stableKey(key), val, kv.Sync); err != nil {
		return fmt.Errorf("raftstore: set %q: %w", key, err)
	}
	return nil
}

// Get returns key's value, or ErrNotFound (text "not found", R5).
func (s *Store) Get(key []byte) ([]byte, error) {
	v, err := s.db.Get(stableKey(key))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("raftstore: get %q: %w", key, err)
	}
	return v, nil
}

// SetUint64 stores val under key as 8 big-endian bytes, durably (R3).
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value SetUint64 stored under key, or ErrNotFound.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftstore: get %q: %w: a uint64 value of %d bytes", key, kv.ErrCorruption, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
