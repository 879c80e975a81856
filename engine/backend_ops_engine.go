package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The Engine's side of the optional Backend operations (backend_ops.go):
// each runs after the Engine's method validated its input, and refuses
// the operation when the Backend lacks the capability.

// backendOp returns e's Backend as a C, or the refusal naming the
// Engine's method that was called.
func backendOp[C any](e *Engine) (C, error) {
	c, ok := e.bs.be.(C)
	if !ok {
		return c, unsupportedOnBackend(e.backend)
	}
	return c, nil
}

// backendCreateChannel is CreateChannel on a Backend.
func (e *Engine) backendCreateChannel(ctx context.Context, in NewChannel, name string) (Channel, error) {
	cs, err := backendOp[ChannelStore](e)
	if err != nil {
		return Channel{}, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return Channel{}, err
	}
	defer done()
	c := Channel{ID: in.ID, ChannelType: ChannelPlain, Name: name, Description: in.Description, ProjectID: in.Project,
		CreatedAt: fromMillis(e.opts.Now().UnixMilli())}
	created, err := cs.CreateChannel(ctx, c)
	if err != nil {
		return Channel{}, err
	}
	if !created {
		return Channel{}, fmt.Errorf("channel %q: %w", in.ID, ErrExists)
	}
	return c, nil
}

// backendGetChannel is GetChannel on a Backend.
func (e *Engine) backendGetChannel(ctx context.Context, id string) (Channel, error) {
	cs, err := backendOp[ChannelStore](e)
	if err != nil {
		return Channel{}, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return Channel{}, err
	}
	defer done()
	c, ok, err := cs.Channel(ctx, id)
	if err != nil {
		return Channel{}, err
	}
	if !ok {
		return Channel{}, fmt.Errorf("channel %q: %w", id, ErrNotFound)
	}
	return c, nil
}

// channelsInScope keeps the channels of all (ordered by id) that scope
// selects, as ListChannels' query does on SQLite.
func channelsInScope(all []Channel, scope Scope) []Channel {
	out := []Channel{}
	for _, c := range all {
		keep := true
		switch scope.Kind {
		case ScopeNotes:
			keep = c.ChannelType == ChannelAgentNotes && (scope.Project == "" || c.OwnerAgentProjectID == scope.Project)
		case ScopeProject:
			keep = c.ProjectID != "" && c.ChannelType != ChannelAgentNotes && (scope.Project == "" || c.ProjectID == scope.Project)
		default:
			keep = scope.Project == "" || c.ProjectID == scope.Project
		}
		if keep && (scope.Agent == "" || c.OwnerAgentName == scope.Agent) {
			out = append(out, c)
		}
	}
	return out
}

// backendAllOfChannel is channelMessages (every message of a channel,
// in id order) on a Backend.
func (e *Engine) backendAllOfChannel(ctx context.Context, channel string) ([]Message, error) {
	cs, err := backendOp[ChannelStore](e)
	if err != nil {
		return nil, err
	}
	ids, err := cs.ChannelMessageIDs(ctx, channel)
	if err != nil {
		return nil, err
	}
	var out []Message
	for len(ids) > 0 {
		n := min(len(ids), 500)
		ms, err := e.backendGetMessages(ctx, ids[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		ids = ids[n:]
	}
	return out, nil
}

// backendStoreStats is StoreStats on a Backend. Search counts are this
// process's: processes sharing a Backend do not add theirs up.
func (e *Engine) backendStoreStats(ctx context.Context) (*StoreStats, error) {
	ss, err := backendOp[StatsStore](e)
	if err != nil {
		return nil, err
	}
	backlog, err := e.backendVectorBacklog(ctx, "")
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	bst, err := ss.Stats(ctx)
	if err != nil {
		return nil, err
	}
	st := &StoreStats{ByChannel: bst.ByChannel, ByType: bst.ByType, ByAgent: bst.ByAgent, Sessions: bst.Sessions, Bytes: bst.Bytes, Vectors: backlog}
	for _, n := range st.ByChannel {
		st.Messages += n
	}
	if e.dir != "" {
		var local DiskStats
		fileBytes(e.dir, &local)
		st.Bytes.Models = local.Models
		st.Bytes.Total += local.Models
	}
	if st.Messages > 0 && st.Bytes.Messages > 0 {
		st.Bytes.VectorsPerMessage = float64(st.Bytes.Vectors) / float64(st.Messages)
		st.Bytes.VectorsToMessages = float64(st.Bytes.Vectors) / float64(st.Bytes.Messages)
	}
	if es, ok := e.EmbedderStats(); ok {
		st.Embedder = &es
	} else {
		st.Notes = append(st.Notes, "embedding cache hit rate: no embedder with a cache in this process")
	}
	n, us := e.searches.n.Load(), e.searches.us.Load()
	st.Search = SearchStats{Searches: n}
	if n > 0 {
		st.Search.AvgMs = float64(us) / float64(n) / 1000
	}
	st.Notes = append(st.Notes, "search counts are this process's: processes sharing a "+e.backend+" store keep their own")
	return st, nil
}

// backendConsistency is Consistency on a Backend.
func (e *Engine) backendConsistency(ctx context.Context) (CheckReport, error) {
	cs, err := backendOp[ConsistencyStore](e)
	if err != nil {
		return CheckReport{}, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	rep, err := cs.Consistency(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	if rep.Sets == nil {
		rep.Sets = []SetCheck{}
	}
	if emb := e.opts.Embedder; emb != nil {
		rep.Embedder = emb.ModelID()
	}
	return rep, nil
}

// backendCheck is Check on a Backend: the consistency report's problems
// are corruption.
func (e *Engine) backendCheck(ctx context.Context) error {
	rep, err := e.backendConsistency(ctx)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(rep.Problems, "; "))
	}
	return nil
}

// backendUnread is Unread on a Backend, after validation.
func (e *Engine) backendUnread(ctx context.Context, req UnreadRequest, limit int) (Unread, error) {
	cs, err := backendOp[CursorStore](e)
	if err != nil {
		return Unread{}, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return Unread{}, err
	}
	defer done()
	ms, n, err := cs.Unread(ctx, req.Agent, req.Channel, req.Project, limit)
	if err != nil {
		return Unread{}, err
	}
	out := Unread{Agent: req.Agent, Channel: req.Channel, Project: req.Project, Messages: ms, Count: n}
	if out.Messages == nil {
		out.Messages = []Message{}
	}
	if len(ms) > 0 {
		out.LastID = ms[len(ms)-1].ID
	}
	return out, nil
}

// backendMarkRead is MarkRead on a Backend, after validation.
func (e *Engine) backendMarkRead(ctx context.Context, req MarkReadRequest, scope string) (ReadCursor, error) {
	cs, err := backendOp[CursorStore](e)
	if err != nil {
		return ReadCursor{}, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return ReadCursor{}, err
	}
	defer done()
	cur, err := cs.MarkRead(ctx, req.Agent, scope, req.Channel, req.UpTo, e.opts.Now())
	if err != nil {
		return ReadCursor{}, err
	}
	cur.Agent, cur.Channel, cur.Project = req.Agent, req.Channel, req.Project
	return cur, nil
}

// backendPutMarks is PutBreadcrumbMarks on a Backend, after validation.
func (e *Engine) backendPutMarks(ctx context.Context, head string, marks map[int64][]BreadcrumbMark) error {
	ms, err := backendOp[MarkStore](e)
	if err != nil {
		return err
	}
	done, err := e.enterBackend()
	if err != nil {
		return err
	}
	defer done()
	rows := make(map[int64]MarkRow, len(marks))
	for id, m := range marks {
		if m == nil {
			m = []BreadcrumbMark{}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("engine: put breadcrumb marks: %w", err)
		}
		rows[id] = MarkRow{Head: head, Worst: worstOf(m), Marks: string(b)}
	}
	return ms.PutMarks(ctx, head, rows)
}

// backendMessagesToMark is MessagesToMark on a Backend, after validation.
func (e *Engine) backendMessagesToMark(ctx context.Context, head string, after int64, limit int) ([]Message, error) {
	ms, err := backendOp[MarkStore](e)
	if err != nil {
		return nil, err
	}
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := ms.MessagesToMark(ctx, head, after, limit)
	if out == nil {
		out = []Message{}
	}
	return out, err
}
