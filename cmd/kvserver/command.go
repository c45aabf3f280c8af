package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadCommand is wrapped by the decoding errors of commands and snapshot
// streams: bytes that no kvserver wrote.
var ErrBadCommand = errors.New("kvserver: malformed input")

// op is a command's operation, the first byte of a raft log entry's Data.
// Do not renumber: in every node's raft log.
type op byte

const (
	opSet    op = 1 // key, value: set a user key
	opDelete op = 2 // key: delete a user key
	opMember op = 3 // key = server ID, value = its HTTP address
	// opCluster names the cluster (S13): no key, value = a clusterID.
	// Applied only to a state without one: the first committed wins.
	opCluster op = 4
	// opFreshJoin records that this cluster took the fresh join of a
	// server whose state is older than cluster IDs (S13): key = its ID,
	// value = its raft address. Applied as a freshJoinPrefix key, which
	// the server's next join of that ID (opMember) deletes.
	opFreshJoin op = 5
	// opFreshJoinEnd deletes server ID's fresh-join record (key = its ID,
	// no value): the operator removed a server that left only that
	// record (DELETE /members/ID), so no state may claim it any more.
	opFreshJoinEnd op = 6
	// lastOp is the highest op this kvserver applies; /status reports it
	// (statusReply.Ops), so a leader can tell whether every member
	// would take a state holding a fresh-join record.
	lastOp = opFreshJoinEnd
)

// command is one state-machine write, the Data of a raft log entry:
//
//	op (1) | uvarint len(key) | key | value (the rest; empty for opDelete)
type command struct {
	op    op
	key   []byte
	value []byte
}

func (c command) encode() []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen32+len(c.key)+len(c.value))
	b = append(b, byte(c.op))
	b = binary.AppendUvarint(b, uint64(len(c.key)))
	b = append(b, c.key...)
	return append(b, c.value...)
}

// decodeCommand parses a log entry's Data; key and value alias b.
func decodeCommand(b []byte) (command, error) {
	if len(b) == 0 {
		return command{}, fmt.Errorf("%w: empty command", ErrBadCommand)
	}
	c := command{op: op(b[0])}
	if c.op < opSet || c.op > lastOp {
		return command{}, fmt.Errorf("%w: unknown command op %d", ErrBadCommand, b[0])
	}
	n, w := binary.Uvarint(b[1:])
	// Only the minimal varint is accepted, so a command has one encoding.
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) || n > uint64(len(b)-1-w) {
		return command{}, fmt.Errorf("%w: bad command key length", ErrBadCommand)
	}
	rest := b[1+w:]
	c.key, c.value = rest[:n:n], rest[n:]
	if len(c.key) > maxStateKeyBytes {
		// The state DB would refuse it on every member alike, and a failed
		// apply stops the node: skip it, as any bad command.
		return command{}, fmt.Errorf("%w: a %d-byte key is longer than the %d the state DB takes", ErrBadCommand, len(c.key), maxStateKeyBytes)
	}
	if c.op == opDelete && len(c.value) != 0 {
		return command{}, fmt.Errorf("%w: delete command with a value", ErrBadCommand)
	}
	if c.op == opFreshJoinEnd && (len(c.key) == 0 || len(c.value) != 0) {
		return command{}, fmt.Errorf("%w: fresh-join end without a server ID or with a value", ErrBadCommand)
	}
	if c.op == opFreshJoin && (len(c.key) == 0 || len(c.value) == 0) {
		return command{}, fmt.Errorf("%w: fresh-join command without a server ID or raft address", ErrBadCommand)
	}
	if c.op == opCluster {
		if len(c.key) != 0 {
			return command{}, fmt.Errorf("%w: cluster command with a key", ErrBadCommand)
		}
		if _, err := clusterIDFrom(c.value); err != nil {
			return command{}, err
		}
	}
	return c, nil
}
