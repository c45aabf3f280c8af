package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

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
//	POST   /join              JSON joinRequest, 200 with a joinReply; forwarded to the
//	                          leader, one hop at most; 409 when it would replace a
//	                          live member (addMember), 413 beyond maxJoinBytes
//
// KEY is the rest of the path, percent-decoded and taken as sent: "a//b"
// and "x/.." are keys of their own, not paths to clean. Writes and
// linearizable reads on a follower answer 307 with the same
// request on the leader. Every request must be authenticated when the node
// has a token or TLS (K2: 401 otherwise), and is bounded by the node's
// Limits (K3: 413 beyond the key or value size, 503 beyond MaxRequests).
func NewHandler(n *Node) http.Handler {
	return newHandler(n, n.sec, n.cfg.Limits, n.sec.httpClient(n.cfg.Token))
}

// newHandler is the API over any backend: the Node, or a fake one in tests.
// client forwards joins to the leader.
func newHandler(b backend, sec *security, limits Limits, client *http.Client) http.Handler {
	h := &handler{b: b, client: client, scheme: sec.scheme(), limits: limits.withDefaults()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", h.status)
	mux.HandleFunc("POST /join", h.join)
	return requireAuth(sec, limitRequests(h.limits.MaxRequests, h.routeKeys(mux)))
}

// keysPrefix is the path prefix of the key routes; the key is the rest.
const keysPrefix = "/kv/"

// routeKeys serves /kv/KEY itself and passes every other path to next.
// ServeMux cleans a path before matching it, answering "/kv/a//b",
// "/kv/x/." or "/kv/x/../y" with a 307 to the cleaned path; a client
// following it (as it must follow a follower's 307 to the leader) would
// then PUT or DELETE another key, "a/b", "x" or "y". A key is any bytes,
// so its path is taken as sent.
func (h *handler) routeKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, keysPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodPut:
			h.put(w, r)
		case http.MethodDelete:
			h.delete(w, r)
		case http.MethodGet, http.MethodHead:
			h.get(w, r)
		default:
			w.Header().Set("Allow", "DELETE, GET, HEAD, PUT")
			http.Error(w, fmt.Sprintf("kvserver: method %s not allowed on a key", r.Method), http.StatusMethodNotAllowed)
		}
	})
}

// backend is what the HTTP API needs of a node.
type backend interface {
	isLeader() bool
	// leaderHTTP is the leader's HTTP host:port, "" when unknown.
	leaderHTTP() string
	// apply commits c and waits until this node applied it.
	apply(c command) error
	linearizableRead(key []byte) ([]byte, error)
	staleRead(key []byte) ([]byte, error)
	status() statusReply
	// addMember makes a server a voter; REQUIRES: isLeader.
	addMember(req joinRequest) error
}

type handler struct {
	b      backend
	client *http.Client // for forwarded joins
	scheme string       // of this cluster's HTTP API: http or https
	limits Limits
}

func (h *handler) put(w http.ResponseWriter, r *http.Request) {
	key, ok := h.requestKey(w, r)
	if !ok {
		return
	}
	max := int64(h.limits.MaxValueBytes)
	if r.ContentLength > max {
		http.Error(w, fmt.Sprintf("kvserver: a value of %d bytes is larger than the %d this node takes (-max-value-bytes)", r.ContentLength, max), http.StatusRequestEntityTooLarge)
		return
	}
	if h.redirectToLeader(w, r) {
		return
	}
	value, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, fmt.Sprintf("kvserver: the value is larger than the %d bytes this node takes (-max-value-bytes)", max), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, fmt.Sprintf("kvserver: read the value: %v", err), http.StatusBadRequest)
		return
	}
	h.write(w, r, command{op: opSet, key: key, value: value})
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request) {
	key, ok := h.requestKey(w, r)
	if !ok || h.redirectToLeader(w, r) {
		return
	}
	h.write(w, r, command{op: opDelete, key: key})
}

func (h *handler) write(w http.ResponseWriter, r *http.Request, c command) {
	if err := h.b.apply(c); err != nil {
		h.raftError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	key, ok := h.requestKey(w, r)
	if !ok {
		return
	}
	var value []byte
	var err error
	if stale, _ := strconv.ParseBool(r.URL.Query().Get("stale")); stale {
		value, err = h.b.staleRead(key)
	} else {
		if h.redirectToLeader(w, r) {
			return
		}
		value, err = h.b.linearizableRead(key)
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

// requestKey is the URL's key (path-unescaped, not cleaned: routeKeys);
// an empty key, or one longer than MaxKeyBytes, is refused.
func (h *handler) requestKey(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	key := strings.TrimPrefix(r.URL.Path, keysPrefix)
	switch {
	case key == "":
		http.Error(w, "empty key", http.StatusBadRequest)
		return nil, false
	case len(key) > h.limits.MaxKeyBytes:
		http.Error(w, fmt.Sprintf("kvserver: a key of %d bytes is longer than the %d this node takes (-max-key-bytes)", len(key), h.limits.MaxKeyBytes), http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return []byte(key), true
}

// redirectToLeader answers a request only the leader can serve, when this
// node is not it: 307 to the same URL on the leader, or 503 when there is
// no leader. It reports whether it answered.
func (h *handler) redirectToLeader(w http.ResponseWriter, r *http.Request) bool {
	if h.b.isLeader() {
		return false
	}
	leader := h.b.leaderHTTP()
	if leader == "" {
		http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
		return true
	}
	http.Redirect(w, r, h.scheme+"://"+leader+r.URL.RequestURI(), http.StatusTemporaryRedirect)
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
	case errors.Is(err, ErrMemberConflict):
		http.Error(w, err.Error(), http.StatusConflict)
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
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(h.b.status())
}

// maxJoinBytes bounds a /join body: a joinRequest is three addresses.
const maxJoinBytes = 4096

// forwardedJoinHeader marks a join one member forwarded to another.
const forwardedJoinHeader = "X-Kvserver-Forwarded-Join"

// join adds the requesting server on the leader, or forwards the request
// to the leader and relays its answer. A forwarded join is not forwarded
// again.
func (h *handler) join(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJoinBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		http.Error(w, fmt.Sprintf("join request: larger than %d bytes", maxJoinBytes), http.StatusRequestEntityTooLarge)
		return
	}
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
	if !h.b.isLeader() {
		leader := h.b.leaderHTTP()
		if leader == "" {
			http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
			return
		}
		// A join goes at most one hop: two followers that each name the
		// other as leader, as during an election, would otherwise pass it
		// back and forth, a request in flight on each per hop, until the
		// joiner gave up. 503, as for no leader: the joiner retries.
		if r.Header.Get(forwardedJoinHeader) != "" {
			http.Error(w, fmt.Sprintf("%v: a join forwarded here, to a node that is not the leader (it names %s): leadership is changing; retry", ErrNoLeader, leader), http.StatusServiceUnavailable)
			return
		}
		fwd, err := http.NewRequestWithContext(r.Context(), http.MethodPost, h.scheme+"://"+leader+"/join", bytes.NewReader(body))
		if err != nil {
			http.Error(w, fmt.Sprintf("forward join to %s: %v", leader, err), http.StatusBadGateway)
			return
		}
		fwd.Header.Set("Content-Type", "application/json")
		fwd.Header.Set(forwardedJoinHeader, "1")
		resp, err := h.client.Do(fwd)
		if err != nil {
			http.Error(w, fmt.Sprintf("forward join to %s: %v", leader, err), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, io.LimitReader(resp.Body, maxJoinBytes))
		return
	}
	if err := h.b.addMember(req); err != nil {
		h.raftError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(joinReply{Fresh: req.Fresh})
}
