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
//	GET    /kv/KEY?stale=true this node's state, no consensus (stale takes one
//	                          boolean; anything else is 400)
//	DELETE /kv/KEY            204 once committed and applied
//	                          (a write whose leader lost leadership after
//	                          appending it: 503, ErrWriteOutcomeUnknown, not a
//	                          redirect; it may yet take effect)
//	GET    /status            JSON (statusReply)
//	POST   /join              JSON joinRequest, 200 with a joinReply; forwarded to the
//	                          leader, one hop at most; 409 when it would replace a
//	                          live member (addMember), 412 when the joiner's state
//	                          is another cluster's (S13), 413 beyond maxJoinBytes
//	GET    /members           JSON list of members, each with whether the leader's
//	                          heartbeats reach it; forwarded to the leader
//	DELETE /members/ID        204 once ID's removal is committed; forwarded to the
//	                          leader; also ends a fresh-join record (/status lists
//	                          them, S13); 404 for an ID in neither, 409
//	                          for a removal that leaves no reached majority
//	                          (unless ?force=true) or no voter (removeMember, S11)
//
// KEY is the rest of the path, percent-decoded and taken as sent: "a//b"
// and "x/.." are keys of their own, not paths to clean. Writes and
// linearizable reads on a follower answer 307 with the same
// request on the leader, except for a key with a "." or ".." segment,
// which a client following the redirect would resolve to another key:
// 421, with the leader's URL in Location. A node shut down under its
// server answers 503. A node removed from the cluster answers 410 to
// every request but /status and /members (S11). Every request must be
// authenticated when the node
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
	mux.HandleFunc("GET /members", h.listMembers)
	mux.HandleFunc("DELETE /members/{id}", h.removeMember)
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
	// join makes a server a voter (Node.addMember) and returns the
	// answer for it; REQUIRES: isLeader.
	join(req joinRequest) (joinReply, error)
	// members lists the configuration with reachability; REQUIRES: isLeader.
	members() ([]member, error)
	// removeMember removes a server once safe or forced; REQUIRES: isLeader.
	removeMember(id string, force bool) error
	// removed reports whether this node was removed from the cluster.
	removed() bool
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

// ErrWriteOutcomeUnknown is a write's answer (503) when its leader lost
// leadership after raft appended its entry (raft.ErrLeadershipLost): the
// entry may yet commit under the next leader, or be overwritten.
var ErrWriteOutcomeUnknown = errors.New("kvserver: the write may or may not take effect")

func (h *handler) write(w http.ResponseWriter, r *http.Request, c command) {
	err := h.b.apply(c)
	if errors.Is(err, raft.ErrLeadershipLost) {
		// Not redirected, unlike a write refused before raft appended it
		// (raft.ErrNotLeader): a client following the 307 would send it
		// again at once, and both copies could commit, the second undoing
		// a write acknowledged between them. The client decides: read the
		// key, or write again.
		err = fmt.Errorf("%w: %w (the entry was appended, and may still commit under the new leader, %q)", ErrWriteOutcomeUnknown, err, h.b.leaderHTTP())
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
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
	stale := false
	if v := r.URL.Query()["stale"]; len(v) > 0 {
		var err error
		if stale, err = strconv.ParseBool(v[0]); err != nil || len(v) > 1 {
			// Served linearizably, a client that meant stale=yes to spare
			// the leader would never learn it did not.
			http.Error(w, fmt.Sprintf("stale=%q is not one boolean (true or false)", strings.Join(v, ",")), http.StatusBadRequest)
			return
		}
	}
	if stale {
		if h.refuseRemoved(w) {
			return
		}
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
	if h.refuseRemoved(w) {
		return true
	}
	leader := h.b.leaderHTTP()
	if leader == "" {
		http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
		return true
	}
	target := h.scheme + "://" + leader + r.URL.RequestURI()
	if key, ok := strings.CutPrefix(r.URL.Path, keysPrefix); ok && hasDotSegment(key) {
		// A client following a redirect resolves the Location as a URL
		// reference, removing "." and ".." segments (RFC 3986 5.2.4; and
		// WHATWG URLs, as browsers and fetch parse them, take %2E for a
		// dot too): it would PUT, DELETE or read another key on the
		// leader. Such a key is sent to the leader by the client itself.
		w.Header().Set("Location", target)
		http.Error(w, fmt.Sprintf("kvserver: this node is not the leader, and a key with a \".\" or \"..\" path segment is not redirected (a client following a redirect would resolve it to another key): send the request to the leader, %s, yourself", target), http.StatusMisdirectedRequest)
		return true
	}
	http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	return true
}

// hasDotSegment reports whether the key, as a URL path, has a "." or ".."
// segment.
func hasDotSegment(key string) bool {
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// refuseRemoved answers 410 when this node was removed from the cluster
// (S11): its state no longer follows the cluster's, and the leader it
// last knew may not lead any more. It reports whether it answered.
func (h *handler) refuseRemoved(w http.ResponseWriter) bool {
	if !h.b.removed() {
		return false
	}
	http.Error(w, ErrRemoved.Error()+": it serves no reads or writes (its state is no longer updated); use another member, or join it again (POST /join, or restart it with -join)", http.StatusGone)
	return true
}

// raftError maps a failed write or read: a request refused for want of
// leadership redirects (a write that lost its leadership after raft
// appended it never comes here: handler.write), other errors are 500s.
func (h *handler) raftError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		if !h.redirectToLeader(w, r) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	case errors.Is(err, ErrMemberConflict), errors.Is(err, ErrUnsafeRemoval):
		http.Error(w, err.Error(), http.StatusConflict)
	case errors.Is(err, ErrClusterMismatch):
		// Final, unlike 409: the joiner's state is another cluster's
		// (S13), and asking again changes nothing.
		http.Error(w, err.Error(), http.StatusPreconditionFailed)
	case errors.Is(err, ErrUnknownMember):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, ErrJoinerUnreachable):
		// The joiner is the upstream this leader could not reach.
		http.Error(w, err.Error(), http.StatusBadGateway)
	case errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, errClusterIDPending),
		errors.Is(err, kv.ErrClosed): // the node shut down under the request: another member can serve it
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// statusReply is GET /status's body.
type statusReply struct {
	ID string `json:"id"`
	// Cluster is the ID of the cluster this node's state belongs to, ""
	// until it holds one (S13).
	Cluster      string   `json:"cluster,omitempty"`
	State        string   `json:"state"`
	Term         uint64   `json:"term"`
	Leader       string   `json:"leader"`      // leader's ID, "" if none known
	LeaderHTTP   string   `json:"leader_http"` // leader's HTTP address, "" if unknown
	CommitIndex  uint64   `json:"commit_index"`
	AppliedIndex uint64   `json:"applied_index"`
	LastIndex    uint64   `json:"last_index"`
	Members      []member `json:"members"`
	StateError   string   `json:"state_error,omitempty"`
	// Removed: this node is outside the configuration it knows, or the
	// leader's as a member's /members listed it, with no leader in
	// contact since (S11).
	Removed bool `json:"removed,omitempty"`
	// Ops is the highest command op this node applies (absent from
	// kvservers older than op 6): a leader keeps a fresh-join record
	// only if every member takes it (recordFreshJoin).
	Ops int `json:"ops,omitempty"`
	// FreshJoins lists the servers whose fresh join this cluster took
	// and which have not joined since (S13): each record vouches for a
	// state older than cluster IDs at its ID and raft address until the
	// server joins again or DELETE /members/ID ends it.
	FreshJoins []string `json:"fresh_joins,omitempty"`
}

// member is one server of the configuration, in /status and /members.
type member struct {
	ID       string `json:"id"`
	Raft     string `json:"raft"`
	HTTP     string `json:"http"`
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
	// Reachable is whether the leader's heartbeats reach the member
	// (S11): set by /members, which the leader answers, not by /status.
	Reachable *bool `json:"reachable,omitempty"`
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(h.b.status())
}

// maxJoinBytes bounds a /join body: a joinRequest is three addresses.
const maxJoinBytes = 4096

// forwardedHeader marks a request one member forwarded to another (its
// name from when only joins were forwarded, which members of older
// versions still look for).
const forwardedHeader = "X-Kvserver-Forwarded-Join"

// maxForwardedReply bounds the answer a forwarded request relays.
const maxForwardedReply = 1 << 20

// forwardToLeader serves a membership request (POST /join, GET and DELETE
// /members) on a follower: it sends the request, with body, to the
// leader and relays its answer, as the leader alone can serve it. It
// reports whether it answered, false on the leader. Forwarded rather than
// redirected (307), unlike the key routes: a joining node, and an
// operator's curl, may name any member and need not follow a redirect
// (curl does not without -L, and drops the token across hosts without
// --location-trusted); the request was authenticated here (K2), and goes
// on with this node's credentials.
//
// A request goes at most one hop: two followers that each name the
// other as leader, as during an election, would otherwise pass it back
// and forth, a request in flight on each per hop, until the client gave
// up. 503, as for no leader: the client retries.
func (h *handler) forwardToLeader(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if h.b.isLeader() {
		return false
	}
	leader := h.b.leaderHTTP()
	if leader == "" {
		http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
		return true
	}
	what := r.Method + " " + r.URL.Path
	if r.Header.Get(forwardedHeader) != "" {
		http.Error(w, fmt.Sprintf("%v: %s forwarded here, to a node that is not the leader (it names %s): leadership is changing; retry", ErrNoLeader, what, leader), http.StatusServiceUnavailable)
		return true
	}
	fwd, err := http.NewRequestWithContext(r.Context(), r.Method, h.scheme+"://"+leader+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, fmt.Sprintf("forward %s to %s: %v", what, leader, err), http.StatusBadGateway)
		return true
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		fwd.Header.Set("Content-Type", ct)
	}
	fwd.Header.Set(forwardedHeader, "1")
	resp, err := h.client.Do(fwd)
	if err != nil {
		http.Error(w, fmt.Sprintf("forward %s to %s: %v", what, leader, err), http.StatusBadGateway)
		return true
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, io.LimitReader(resp.Body, maxForwardedReply))
	return true
}

// listMembers answers GET /members on the leader, or forwards it there.
func (h *handler) listMembers(w http.ResponseWriter, r *http.Request) {
	if h.forwardToLeader(w, r, nil) {
		return
	}
	ms, err := h.b.members()
	if err != nil {
		h.raftError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ms)
}

// removeMember answers DELETE /members/ID on the leader, or forwards it
// there.
func (h *handler) removeMember(w http.ResponseWriter, r *http.Request) {
	force, err := strconv.ParseBool(r.URL.Query().Get("force"))
	if r.URL.Query().Get("force") == "" {
		force, err = false, nil
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("force=%q is not a boolean", r.URL.Query().Get("force")), http.StatusBadRequest)
		return
	}
	if h.forwardToLeader(w, r, nil) {
		return
	}
	err = h.b.removeMember(r.PathValue("id"), force)
	if errors.Is(err, raft.ErrLeadershipLost) {
		// As a forced removal that leaves no majority up: the leader
		// cannot reach a majority of the new configuration, and steps down.
		http.Error(w, fmt.Sprintf("%v: the removal was proposed and may yet commit, once a majority of the new configuration is up (GET /members shows it)", err), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		h.raftError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// join adds the requesting server on the leader, or forwards the request
// to the leader and relays its answer.
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
	if h.forwardToLeader(w, r, body) {
		return
	}
	reply, err := h.b.join(req)
	if err != nil {
		if errors.Is(err, ErrBadCommand) {
			// The leader's own checks of the request (its transport's
			// address form).
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.raftError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reply)
}
