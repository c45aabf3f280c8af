package main

import (
	"bytes"
	"errors"
	"testing"
)

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range []command{
		{op: opSet, key: []byte("k"), value: []byte("v")},
		{op: opSet, key: []byte("k"), value: nil},
		{op: opDelete, key: []byte("a/b")},
		{op: opMember, key: []byte("n1"), value: []byte("127.0.0.1:8001")},
		{op: opCluster, value: bytes.Repeat([]byte{7}, 16)},
		{op: opFreshJoin, key: []byte("n2"), value: []byte("127.0.0.1:7002")},
		{op: opFreshJoinEnd, key: []byte("n2")},
	} {
		got, err := decodeCommand(c.encode())
		if err != nil || got.op != c.op || !bytes.Equal(got.key, c.key) || !bytes.Equal(got.value, c.value) {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", c, got, err)
		}
	}
	for _, b := range [][]byte{nil, {0}, {9, 0}, {1}, {1, 5, 'a'}, {2, 1, 'a', 'v'}, {1, 0xff}, {1, 0x80, 0x00},
		// A cluster command needs exactly a non-zero 16-byte ID and no key.
		{4, 0}, {4, 0, 1, 2, 3}, append([]byte{4, 0}, make([]byte, 16)...), append([]byte{4, 1, 'k'}, bytes.Repeat([]byte{1}, 16)...),
		// A fresh-join command names a server and its raft address.
		{5, 0}, {5, 0, 'a'}, {5, 1, 'n'},
		// Its end names a server and nothing else.
		{6, 0}, {6, 1, 'n', 'a'}, {7, 0}} {
		if _, err := decodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("decodeCommand(%x) = %v; want ErrBadCommand", b, err)
		}
	}
}

// FuzzDecodeCommand: no input panics, and an accepted one re-encodes to
// the same bytes.
func FuzzDecodeCommand(f *testing.F) {
	f.Add(command{op: opSet, key: []byte("key"), value: []byte("value")}.encode())
	f.Add(command{op: opDelete, key: []byte("key")}.encode())
	f.Add(command{op: opCluster, value: bytes.Repeat([]byte{7}, 16)}.encode())
	f.Add(command{op: opFreshJoin, key: []byte("n2"), value: []byte("127.0.0.1:7002")}.encode())
	f.Add(command{op: opFreshJoinEnd, key: []byte("n2")}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCommand(b)
		if err != nil {
			return
		}
		if again := c.encode(); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, c, again)
		}
	})
}
