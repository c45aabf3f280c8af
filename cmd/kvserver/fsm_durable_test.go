package main

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// recordStateDirSyncs routes the state machine's directory syncs through
// an errorfs over the OS and returns it with the synced names so far.
func recordStateDirSyncs(t *testing.T) (*errorfs.FS, func() []string) {
	efs, synced := errorfs.Record(vfs.Default, errorfs.OpSync)
	old := stateDirFS
	stateDirFS = efs
	t.Cleanup(func() { stateDirFS = old })
	return efs, synced
}

// TestStateDirIsDurableInItsParent caught that the node created its
// state/ directory without syncing the node directory: a power loss could
// forget state/ and so every generation and CURRENT inside it, although
// each of those was synced.
func TestStateDirIsDurableInItsParent(t *testing.T) {
	_, synced := recordStateDirSyncs(t)
	node := t.TempDir()
	sm, err := openStateMachine(filepath.Join(node, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	if got := synced(); !slices.Contains(got, node) {
		t.Fatalf("directories synced %q; want the node directory %s, state/'s parent", got, node)
	}
}

// TestStateDirSyncFailureFailsOpen: a state directory that could not be
// made durable must not be used as if it were.
func TestStateDirSyncFailureFailsOpen(t *testing.T) {
	efs, _ := recordStateDirSyncs(t)
	efs.FailAt(1, false)
	node := t.TempDir()
	sm, err := openStateMachine(filepath.Join(node, "state"), nil)
	if err == nil {
		sm.close()
		t.Fatal("openStateMachine succeeded with its directory sync failing")
	}
	if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("openStateMachine = %v; want the injected sync failure", err)
	}
}
