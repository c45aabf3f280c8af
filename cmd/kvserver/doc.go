// Command kvserver is a node of a replicated key-value service: its state
// machine is a sievekv DB and its raft log and stable store are raftstore,
// with consensus by hashicorp/raft as it is.
//
//	kvserver -id n1 -dir data/n1 -raft 127.0.0.1:7001 -http 127.0.0.1:8001
//	kvserver -id n2 -dir data/n2 -raft 127.0.0.1:7002 -http 127.0.0.1:8002 -join http://127.0.0.1:8001
//
// -http is where the HTTP API listens and, unless -http-advertise says
// otherwise, the address the node hands the other members and clients (its
// join request, every redirect to it); an unspecified host (0.0.0.0, ::)
// there is refused at start, since nobody can dial it.
//
// The HTTP API is described on NewHandler; running a cluster and the cost of
// each read mode are in the README ("A replicated cluster: kvserver"), a
// secured one in its "A secure three-node cluster".
//
// # Layout of DIR
//
//	raft/       the raftstore DB: raft's log and stable state
//	snapshots/  raft's file snapshot store (the stream format of S3)
//	state/      the state machine: CURRENT names the live generation
//	            directory (000001, ...), a sievekv DB
//
// # Concurrency
//
// raft calls the state machine's Apply, Snapshot and Restore on one
// goroutine; HTTP handlers read the state concurrently under
// stateMachine.mu held shared, which Restore takes exclusively to swap DBs.
// A snapshot's Persist and Release run on raft's snapshot goroutine and
// hold no lock between them (S5).
//
// # Invariants
//
//	S1 (one writer): only committed raft entries change the state, applied
//	   in index order on raft's FSM goroutine.
//	S2 (applied index): each command's write and the new applied index are
//	   one sievekv batch, so the DB knows exactly which entries it holds; a
//	   replayed entry at or below it is skipped. Snapshot syncs the DB
//	   first, so the state is durable up to any index raft compacts away,
//	   and raft need not restore a snapshot at start.
//	S3 (streamed snapshots): a snapshot is a sievekv snapshot iterated one
//	   record at a time into raft's sink, never built in memory; Restore
//	   fills a new generation, syncs it, and only then switches CURRENT.
//	S4 (linearizable reads): served by the leader after a barrier in its
//	   current term, at read index = commit index, once VerifyLeader has
//	   heard from a quorum and the applied index reached the read index.
//	S5 (Restore never waits for a snapshot): an unreleased FSM snapshot
//	   pins its DB, not stateMachine.mu; Restore swaps in the new DB at
//	   once and the snapshot's Release closes the DB it replaced. raft's
//	   takeSnapshot holds its FSM snapshot while it waits on raft's main
//	   goroutine, which in installSnapshot waits for Restore: a lock held
//	   from Snapshot to Release deadlocked the node there.
//	S6 (a failed state is not snapshotted): after an Apply fails to write
//	   the DB, later commands are skipped, so the state is behind raft's
//	   applied index; Snapshot then fails rather than let raft compact
//	   the skipped commands out of the log under a snapshot lacking them.
//	   A Restore replaces the state whole and ends the failure.
//	S7 (no wait outlives raft): every raft future the node waits on is
//	   given up once the node or raft shuts down (Node.await); raft drops
//	   the futures still queued for its FSM goroutine unanswered, and a
//	   wait on one held Shutdown, or a request, for ever.
//	S8 (a node that lost its state returns as a new server): a node with
//	   -join and no raft term or log (raft/ lost; snapshots alone hold
//	   neither its vote nor what it acknowledged after them, and without
//	   -join they are ErrRaftStateLost, as is a state DB that applied
//	   entries of the lost log: a new cluster bootstrapped on it would
//	   number its log from 1 again, and the state machine would skip its
//	   commands up to the old applied index, each acknowledged) first
//	   sends a fresh join
//	   (joinRequest.Fresh): the leader removes every member of
//	   its ID or raft address (raft sends to an address, so a member
//	   listed at it would take this node's answers for its own) and
//	   answers once the removal is committed (addMember: a barrier, as
//	   a removal an earlier request proposed, still uncommitted, leaves
//	   nothing to remove in the latest configuration). Only then does
//	   the node start raft, and it joins again to be added as a voter.
//	   The wait has no bound of its own (a cluster without a majority up
//	   commits nothing); SIGTERM or StartNodeContext's ctx ends it with
//	   raft not started and the directory closed, still without raft
//	   state, so a restart asks again.
//	   The old member's acknowledgements and votes went with its disk:
//	   the removal, committed by a majority of the members left, puts
//	   every committed entry on that majority, and a candidate still
//	   counting the old member (a configuration older than the removal)
//	   lacks the removal and gets no vote from that majority. So the
//	   votes hashicorp/raft grants while its configuration is empty, and
//	   the RPCs its transport queued before raft started (answered only
//	   after the removal), are a new server's. A member still alive is
//	   not removed (S10). Without -join a node
//	   without state bootstraps a cluster of its own: it cannot know of
//	   one that still counts its ID. A member that lost its disk must
//	   therefore be restarted with -join; started without, it fails
//	   ("bootstrap only works on new clusters") if the old leader reaches
//	   it first, and otherwise leads its own cluster until the old leader
//	   overwrites its log, then serves there as the voter it was with its
//	   votes forgotten, the case the fresh join exists to prevent.
//	S9 (a node with state rejoins): a node with -join and raft state
//	   asks to join once raft runs: a member removed while it was down is
//	   added back as a voter (its log and votes are its own), and one
//	   still a voter changes nothing.
//	S10 (a join removes only a member that is down): a join, fresh or
//	   not, removes a member of its ID or raft address only when the
//	   leader's heartbeats to that member are failing (heartbeatWatch)
//	   and it does not answer GET /status as itself (memberAlive);
//	   otherwise ErrMemberConflict (409). /status alone is no proof of
//	   death: a busy node answers 503, a slow one times out, and its
//	   registered HTTP address may be stale or cut off from the leader,
//	   while its raft still counts towards every commit. So a mistaken
//	   -id, a client with the token, or a fresh join delayed or resent
//	   until after the node it came from was added back cannot remove a
//	   voter raft reaches. A fresh joiner's transport listens but its raft
//	   does not answer until the removal, so its own old member fails the
//	   heartbeats; a new leader's heartbeats start afresh, so a fresh
//	   join right after an election waits (409, retried) for a failure.
//	S11 (a removal keeps a quorum it can reach): DELETE /members/ID, on
//	   the leader (a follower forwards it, one hop, as it does /join),
//	   removes server ID and answers once the removal is committed. The
//	   new configuration must keep a voter, always, and, unless
//	   ?force=true, a majority of its voters reached: this leader, or a
//	   member that answered one of its AppendEntries (heartbeats
//	   included) within the last heartbeat timeout (heartbeatWatch.reached,
//	   told by reportingTransport). That is positive evidence, not S10's
//	   absence of failures: a leadership just begun has seen no failure
//	   yet, and a dead host's dial takes raftTimeout to fail, so counting
//	   such a member up could leave a configuration that commits nothing,
//	   its own removal included. The check and RemoveServer see one
//	   configuration (prevIndex), one removal at a time (Node.removing).
//	   The leader may remove itself: the removal commits under the new
//	   configuration, then it steps down and the others elect a leader.
//	   A forced removal that leaves no majority up is proposed, the
//	   leader steps down (it reaches no quorum of the new configuration:
//	   503), and it commits once a majority of that configuration is up.
//	   A removed member left running hears from no leader: raft stops
//	   replicating to it once the removal is appended (after one last
//	   attempt to send it). A server outside its latest configuration
//	   never turns candidate (hashicorp/raft 1.7), and a leader that
//	   removed itself stays up as such a follower (ShutdownOnRemove off),
//	   so both can be joined again without a restart. Outside its latest
//	   configuration with no leader in contact for a heartbeat timeout
//	   (Node.removed; the contact spares a joiner that installs a
//	   snapshot older than its addition) it reports "removed" in /status
//	   and answers 410 to writes and reads, stale ones too, as its state
//	   no longer follows the cluster's. One cut off until raft gave up
//	   sending it the removal still counts itself a voter and calls
//	   elections, pre-votes first; members reject a pre-vote or vote from
//	   a server outside their configuration before they look at its term
//	   (hashicorp/raft 1.7: issue 524, PR 526), so it deposes no leader.
//	   While no leader is in contact, a node its own configuration still
//	   counts asks the members for the leader's (GET /members) and, once
//	   it lists no such node, is removed as above until a leader's contact
//	   (removalWatch): raft alone would leave it a candidate whose
//	   requests 503, like a member cut off.
//	   A removed node restarted with -join asks to be added back (S9).
//	S12 (a joiner votes only once it has answered): a join (not fresh)
//	   adds its server as a nonvoter and makes it a voter only after it
//	   answered one of the leader's AppendEntries sent after the join
//	   began (heartbeatWatch.answeredSince); one that answers none within
//	   joinAnswerWait heartbeat timeouts is removed again and the join
//	   fails with ErrJoinerUnreachable (502), which the joiner retries. A
//	   well-formed address nobody serves (a typo, a firewalled port)
//	   would otherwise be a voter that never votes: in a cluster of one it
//	   takes the majority away, and the removal that would undo it cannot
//	   commit. A nonvoter counts in no majority, so the wait and the
//	   removal commit. A joiner left a nonvoter (its leader failed before
//	   the promotion) is promoted by its next join. The answer must come
//	   from the joiner's address (a server of its ID elsewhere proves
//	   nothing of it), joins are serialized on the leader (Node.joining),
//	   and the promotion or removal names the configuration its addition
//	   made (prevIndex), so it never acts on another server of that ID.
//	   The wait is at most joinAnswerWaitMax, so that the joiner hears the
//	   502 before its HTTP client gives up.
//	S13 (a node holds one cluster's state, and deals with that cluster
//	   only): a cluster has an ID, 16 random bytes the first leader whose
//	   state has none proposes (leaderLoop) and the first applied opCluster
//	   sets for good (stateMachine.Apply); it is in the state DB and in
//	   every snapshot stream, so each member that applied the log past it,
//	   or installed a snapshot, holds the same one. raft cannot tell two
//	   clusters apart: its log check compares indexes and terms, small
//	   integers two clusters share, so a node with cluster A's state that
//	   meets cluster B would take B's entries after A's, its state machine
//	   skip B's commands up to A's applied index (S2), and serve A's values
//	   as B's, while B counted it in its majorities. So where a node holding
//	   an ID meets one holding another, nothing passes: a join carries
//	   the joiner's ID and B's leader answers 412 (ErrClusterMismatch), or
//	   503 while it holds no ID itself (just elected: joinableCluster),
//	   which a fresh joiner returns from StartNode and a joiner with raft
//	   running delivers on Node.Failed (kvserver exits); a snapshot of
//	   another cluster is not restored; and every raft connection opens
//	   with a hello each way naming the ID (clusterStreamLayer), closed
//	   before raft sends a byte when the two differ, so a node started
//	   from an old directory at an address another cluster's member now
//	   has neither takes nor answers that cluster's entries. A node that
//	   holds no ID passes these checks, which is right for a new node;
//	   three more close the cases where an ID is missing. A joiner's state
//	   older than S13 (applied entries, no ID) is taken only if it is a
//	   server of the leader's configuration behind the entry that named
//	   the cluster, whose index the state keeps with the ID
//	   (clusterRecord, joinableState): one that applied it would hold the
//	   ID. Taking such a joiner's fresh join, which removes its old
//	   server, the leader first records its ID and raft address
//	   (opFreshJoin), and counts a server so recorded as its own: the
//	   answer may never reach the joiner, whose next join names no
//	   cluster again; its first join naming one (opMember) ends the
//	   record, and so does the operator's removal of that ID
//	   (opFreshJoinEnd), should the joiner never come back. Only a join
//	   that removes the joiner's own server, past the check that it is
//	   not alive, is recorded, and only while every other member reports
//	   at /status that it applies the record (statusReply.Ops): an older
//	   kvserver refuses every snapshot that holds one; the leader ends
//	   every record before it adds a joiner whose request does not
//	   report that (joinRequest.Ops). A join's answer names the leader's
//	   cluster, and the joiner hellos and joins with that until its state
//	   holds it
//	   (helloCluster), keeping it in the raft stable store first, so that
//	   a restart before the state learns it names it too
//	   (joinedClusterKey); a fresh
//	   joiner, listening before raft starts, refuses every hello until its
//	   join is answered (clusterStreamLayer.hold), since an RPC read then
//	   would wait for raft and be served. And a connection whose hello
//	   compared nothing (this node knew no ID) is closed once it learns
//	   one (clusterStreamLayer.learnt), so raft dials again and the new
//	   hello compares. A start removes a snapshot Restore refused
//	   (catchUpFromSnapshot): raft saves an installed
//	   snapshot before it restores it. The in-memory transport of tests
//	   has no hello.
//	S14 (a leader stopping hands over): Shutdown on a leader with another
//	   voter first transfers its leadership (handOffLeadership: raft
//	   brings the voter with most of its log up to date and has it stand
//	   at once), waiting at most handOffWait heartbeat timeouts. Without
//	   it, a leader stopped cleanly (SIGTERM, a rolling restart) left the
//	   cluster without one until a follower's election timeout ran out,
//	   at least a heartbeat timeout of refused writes. A transfer that
//	   fails leaves that election to happen as before.
//
// # Security
//
// A node is safe by default: what it does not protect it does not expose.
//
//	K1 (exposure): an address without a host is loopback. A non-loopback
//	   HTTP address needs a token or TLS (client certificates), a
//	   non-loopback raft address needs TLS; otherwise StartNode refuses
//	   with ErrInsecure and the flags that fix it (loadSecurity).
//	K2 (authentication): with a token or TLS, every HTTP request, /join
//	   and /status included, carries the bearer token (compared in
//	   constant time) or a client certificate the CA signed; any other is
//	   answered 401 before its body is read or the state is touched
//	   (requireAuth). So only an authenticated join adds a voter.
//	K3 (bounded requests): a key, a value, the request headers, the time
//	   to send them and the requests in flight are bounded (Limits):
//	   beyond them a 413 or 503, or the connection is closed; no request
//	   has more than MaxValueBytes of its body read.
//	K4 (raft over mutual TLS): with TLS files, raft connections are TLS
//	   with client certificates required and verified against the CA in
//	   both directions, the handshake finished (within raftTimeout) before
//	   raft reads a byte; a peer without a CA-signed certificate cannot
//	   send a raft message (tlsStreamLayer).
package main
