package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// NewHandler is the node's HTTP API:
//
//	PUT    /kv/KEY            body = value; 204 once committed and applied
//	GET    /kv/KEY            linearizable read (leader); 404 when absent
//	GET    /kv/KEY?stale=true this node's state, no consensus
//	DELETE /kv/KEY            204 once committed and applied
//	GET    /status            JSON (statusReply)
//	POST   /join              JSON joinRequest; forwarded to the leader
//
// Writes and linearizable reads on a follower answer 307 with the same
// request on the leader. Middleware for authentication and limits wraps
// the returned handler.
func NewHandler(n *Node) http.Handler {
	h := &handler{n: n, client: &http.Client{Timeout: applyTimeout + 5*time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /kv/{key...}", h.put)
	mux.HandleFunc("DELETE /kv/{key...}", h.delete)
	mux.HandleFunc("GET /kv/{key...}", h.get)
	mux.HandleFunc("GET /status", h.status)
	mux.HandleFunc("POST /join", h.join)
	return mux
}

type handler struct {
	n      *Node
	client *http.Client // for forwarded joins
}

func (h *handler) put(w http.ResponseWriter, r *http.Request) {
	key, ok := requestKey(w, r)
	if !ok || h.redirectToLeader(w, r) {
		return
	}
	value, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValueBytes))
	if err != nil {
		http.Error(w, fmt.Sprintf("value: %v (at most %d bytes)", err, maxValueBytes), http.StatusRequestEntityTooLarge)
		return
	}
	h.write(w, r, command{op: opSet, key: key, value: value})
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request) {
	key, ok := requestKey(w, r)
	if !ok || h.redirectToLeader(w, r) {
		return
	}
	h.write(w, r, command{op: opDelete, key: key})
}

func (h *handler) write(w http.ResponseWriter, r *http.Request, c command) {
	if err := h.n.apply(c); err != nil {
		h.raftError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	key, ok := requestKey(w, r)
	if !ok {
		return
	}
	var value []byte
	var err error
	if stale, _ := strconv.ParseBool(r.URL.Query().Get("stale")); stale {
		if err = h.n.fsm.failure(); err == nil {
			value, err = h.n.fsm.get(key)
		}
	} else {
		if h.redirectToLeader(w, r) {
			return
		}
		value, err = h.n.linearizableRead(key)
	}
	switch {
	case errors.Is(err, kv.ErrNotFound):
		http.Error(w, "not found", http.StatusNotFound)
	case err != nil:
		h.raftError(w, r, err)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(value)
	}
}

// requestKey is the URL's key (path-unescaped); an empty key is refused.
func requestKey(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	key := r.PathValue("key")
	if key == "" {
		http.Error(w, "empty key", http.StatusBadRequest)
		return nil, false
	}
	return []byte(key), true
}

// redirectToLeader answers a request only the leader can serve, when this
// node is not it: 307 to the same URL on the leader, or 503 when there is
// no leader. It reports whether it answered.
func (h *handler) redirectToLeader(w http.ResponseWriter, r *http.Request) bool {
	if h.n.raft.State() == raft.Leader {
		return false
	}
	leader := h.n.leaderHTTP()
	if leader == "" {
		http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
		return true
	}
	http.Redirect(w, r, "http://"+leader+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	return true
}

// raftError maps a failed write or read: lost leadership mid-request
// redirects (the write may or may not have committed: PUT and DELETE are
// idempotent, so the client retries), other errors are 500s.
func (h *handler) raftError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		if !h.redirectToLeader(w, r) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	case errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, raft.ErrRaftShutdown):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// statusReply is GET /status's body.
type statusReply struct {
	ID           string   `json:"id"`
	State        string   `json:"state"`
	Term         uint64   `json:"term"`
	Leader       string   `json:"leader"`      // leader's ID, "" if none known
	LeaderHTTP   string   `json:"leader_http"` // leader's HTTP address, "" if unknown
	CommitIndex  uint64   `json:"commit_index"`
	AppliedIndex uint64   `json:"applied_index"`
	LastIndex    uint64   `json:"last_index"`
	Members      []member `json:"members"`
	StateError   string   `json:"state_error,omitempty"`
}

type member struct {
	ID       string `json:"id"`
	Raft     string `json:"raft"`
	HTTP     string `json:"http"`
	Suffrage string `json:"suffrage"`
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	n := h.n
	_, leader := n.raft.LeaderWithID()
	s := statusReply{
		ID:           n.cfg.ID,
		State:        n.raft.State().String(),
		Term:         n.raft.CurrentTerm(),
		Leader:       string(leader),
		LeaderHTTP:   n.leaderHTTP(),
		CommitIndex:  n.raft.CommitIndex(),
		AppliedIndex: n.raft.AppliedIndex(),
		LastIndex:    n.raft.LastIndex(),
		Members:      []member{},
	}
	if err := n.fsm.failure(); err != nil {
		s.StateError = err.Error()
	}
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		for _, srv := range cf.Configuration().Servers {
			s.Members = append(s.Members, member{
				ID: string(srv.ID), Raft: string(srv.Address),
				HTTP: n.fsm.memberHTTP(string(srv.ID)), Suffrage: srv.Suffrage.String(),
			})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(s)
}

// join adds the requesting server on the leader, or forwards the request
// to the leader and relays its answer.
func (h *handler) join(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	var req joinRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("join request: %v", err), http.StatusBadRequest)
		return
	}
	if err := req.validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if h.n.raft.State() != raft.Leader {
		leader := h.n.leaderHTTP()
		if leader == "" {
			http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
			return
		}
		resp, err := h.client.Post("http://"+leader+"/join", "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, fmt.Sprintf("forward join to %s: %v", leader, err), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, io.LimitReader(resp.Body, 4096))
		return
	}
	if err := h.n.addMember(req); err != nil {
		h.raftError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
