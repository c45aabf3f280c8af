package raftstore_test

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/sievekv/sievekv/raftstore"
)

// Open a store, append entries, read them back and truncate the log
// prefix, as raft does after a snapshot.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "raftstore-example-")
	defer os.RemoveAll(dir)

	s, err := raftstore.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	var logs []*raft.Log
	for i := uint64(1); i <= 5; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprint("cmd", i))})
	}
	if err := s.StoreLogs(logs); err != nil { // durable when it returns
		panic(err)
	}
	if err := s.DeleteRange(1, 2); err != nil {
		panic(err)
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	var l raft.Log
	s.GetLog(4, &l)
	fmt.Println(first, last, string(l.Data))

	s.SetUint64([]byte("CurrentTerm"), 7)
	term, _ := s.GetUint64([]byte("CurrentTerm"))
	_, err = s.Get([]byte("never set"))
	fmt.Println(term, err)
	// Output:
	// 3 5 cmd4
	// 7 not found
}

// counter is a minimal raft state machine: it counts applied commands.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Apply(*raft.Log) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}
func (c *counter) Snapshot() (raft.FSMSnapshot, error) { return nil, fmt.Errorf("not supported") }
func (c *counter) Restore(io.ReadCloser) error         { return fmt.Errorf("not supported") }

// A one-node hashicorp/raft cluster whose log and stable store are one
// raftstore.Store.
func Example_raft() {
	dir, _ := os.MkdirTemp("", "raftstore-example-")
	defer os.RemoveAll(dir)
	store, err := raftstore.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	conf := raft.DefaultConfig()
	conf.LocalID = "node1"
	conf.LogOutput = io.Discard
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 25 * time.Millisecond
	_, transport := raft.NewInmemTransport("node1")
	r, err := raft.NewRaft(conf, &counter{}, store, store, raft.NewInmemSnapshotStore(), transport)
	if err != nil {
		panic(err)
	}
	defer func() { r.Shutdown().Error() }()
	boot := raft.Configuration{Servers: []raft.Server{{ID: "node1", Address: transport.LocalAddr()}}}
	if err := r.BootstrapCluster(boot).Error(); err != nil {
		panic(err)
	}
	select {
	case <-r.LeaderCh():
	case <-time.After(10 * time.Second):
		panic("no leader elected")
	}
	f := r.Apply([]byte("increment"), time.Second)
	if err := f.Error(); err != nil {
		panic(err)
	}
	fmt.Println("applied, counter =", f.Response())
	// Output: applied, counter = 1
}
