package ingest

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

// copyBatch is how many messages CopyMessagesTo reads and writes at once.
const copyBatch = 1000

// CopyReport says what CopyMessagesTo did.
type CopyReport struct {
	// Source and Target count the messages on each side at the end.
	Source int64 `json:"source_messages"`
	Target int64 `json:"target_messages"`
	// Copied were written now; Present were in the target already (an
	// earlier, interrupted copy, or the same message written to both).
	Copied  int64 `json:"copied"`
	Present int64 `json:"present"`
}

// CopyMessagesTo copies every message of e to dst, between a data dir and
// a Store either way, in id order and batches of 1000: channel, sender,
// project, content, metadata (breadcrumbs included), confidence, type and
// created_at are kept; dst assigns its own ids. Writes are idempotent, so
// an interrupted copy resumes by running again (what is there is found,
// not written twice), and a copy into a store that already holds some of
// the messages adds only the others. Channel names and descriptions are
// CopyChannelsTo's, run first.
// progress, if not nil, is called after each batch. The report's counts
// let the caller verify the copy (every source message is in the target).
func CopyMessagesTo(ctx context.Context, e, dst *engine.Engine, progress func(engine.Progress)) (CopyReport, error) {
	return copyMessages(ctx, e, dst, progress, nil)
}

// copyMessages is CopyMessagesTo; mapped, if not nil, is called with each
// source message's id and its id in dst.
func copyMessages(ctx context.Context, e, dst *engine.Engine, progress func(engine.Progress), mapped func(from, to int64)) (CopyReport, error) {
	var rep CopyReport
	total, err := messageCount(ctx, e)
	if err != nil {
		return rep, err
	}
	var after int64
	// to maps source ids to dst's, for the supersedes links: a message
	// supersedes an older one, copied before it (in an earlier batch:
	// a batch is cut before a message superseding one of the same batch).
	to := map[int64]int64{}
	for {
		ms, err := messagesAfter(ctx, e, after, copyBatch)
		if err != nil {
			return rep, err
		}
		if len(ms) == 0 {
			break
		}
		in := make([]engine.NewMessage, 0, len(ms))
		for _, m := range ms {
			if m.Supersedes > after && len(in) > 0 {
				break
			}
			conf := m.Confidence
			in = append(in, engine.NewMessage{Channel: m.ChannelID, Sender: m.SenderID, Project: m.SenderProjectID, Content: m.Content,
				Metadata: m.Metadata, Confidence: &conf, Type: m.MessageType, CreatedAt: m.CreatedAt, Supersedes: to[m.Supersedes]})
		}
		ms = ms[:len(in)]
		res, err := dst.StoreMessages(ctx, in)
		if err != nil {
			return rep, fmt.Errorf("engine: copy messages after id %d: %w", after, err)
		}
		for i, r := range res {
			if r.ContentHash != ms[i].ContentHash {
				return rep, fmt.Errorf("%w: message %d: the copy's content hash differs (a redactor or content limit of the target changed it)", engine.ErrCorrupt, ms[i].ID)
			}
			if mapped != nil {
				mapped(ms[i].ID, r.ID)
			}
			to[ms[i].ID] = r.ID
			if r.Created {
				rep.Copied++
			} else {
				rep.Present++
			}
		}
		after = ms[len(ms)-1].ID
		if progress != nil {
			progress(engine.Progress{Done: rep.Copied + rep.Present, Total: total, Item: "messages"})
		}
	}
	if rep.Source, err = messageCount(ctx, e); err != nil {
		return rep, err
	}
	if rep.Target, err = messageCount(ctx, dst); err != nil {
		return rep, err
	}
	return rep, nil
}

// messageCount is the number of stored messages.
func messageCount(ctx context.Context, e *engine.Engine) (int64, error) {
	return use(e, func(s engine.Store) (int64, error) { return s.Count(ctx) })
}

// messagesAfter returns up to limit messages with ids above after, in id
// order.
func messagesAfter(ctx context.Context, e *engine.Engine, after int64, limit int) ([]engine.Message, error) {
	return use(e, func(s engine.Store) ([]engine.Message, error) { return s.After(ctx, after, limit) })
}

// use runs fn with e's store, guarded against Close (Engine.Use).
func use[R any](e *engine.Engine, fn func(engine.Store) (R, error)) (R, error) {
	var r R
	err := e.Use(func(s engine.Store) error {
		var err error
		r, err = fn(s)
		return err
	})
	return r, err
}
