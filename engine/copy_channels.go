package engine

import (
	"context"
	"errors"
)

// CopyChannelsTo creates in dst the plain channels of e that carry more
// than their id (a display name other than the id, a description or a
// project) or hold no message yet, as CreateChannel makes them; a channel
// dst has already is left as it is. Run before CopyMessagesTo, so that
// the messages' first write does not create the channel bare. It returns
// how many channels it created.
func (e *Engine) CopyChannelsTo(ctx context.Context, dst *Engine) (int, error) {
	all, err := e.ListChannels(ctx, Scope{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range all {
		if c.ChannelType != ChannelPlain || c.Name == c.ID && c.Description == "" && c.ProjectID == "" && c.MessageCount > 0 {
			continue
		}
		_, err := dst.CreateChannel(ctx, NewChannel{ID: c.ID, Name: c.Name, Description: c.Description, Project: c.ProjectID})
		switch {
		case err == nil:
			n++
		case !errors.Is(err, ErrExists):
			return n, err
		}
	}
	return n, nil
}
