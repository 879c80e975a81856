package ingest

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn/engine"
)

// CopyChannelsTo creates in dst the plain channels of e that carry more
// than their id (a display name other than the id, a description or a
// project) or hold no message yet, as CreateChannel makes them; a channel
// dst has already is left as it is. Run before CopyMessagesTo, so that
// the messages' first write does not create the channel bare. It returns
// how many channels it created.
func CopyChannelsTo(ctx context.Context, e, dst *engine.Engine) (int, error) {
	all, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range all {
		if c.ChannelType != engine.ChannelPlain || c.Name == c.ID && c.Description == "" && c.ProjectID == "" && c.MessageCount > 0 {
			continue
		}
		_, err := dst.CreateChannel(ctx, engine.NewChannel{ID: c.ID, Name: c.Name, Description: c.Description, Project: c.ProjectID})
		switch {
		case err == nil:
			n++
		case !errors.Is(err, engine.ErrExists):
			return n, err
		}
	}
	return n, nil
}
