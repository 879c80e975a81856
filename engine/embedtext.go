package engine

import ()

// EmbedContext says what the engine embeds for a message besides its
// content. It changes only the text given to the Embedder: the stored
// content, snippets and results stay the message as written, and queries
// are embedded as given.
type EmbedContext string

// Embedding contexts.
const (
	// EmbedContent embeds the content alone (the default, "").
	EmbedContent EmbedContext = "content"
	// EmbedSenderDate embeds "sender (2 January 2006): content". A short
	// conversational turn ("I went there yesterday, it was great") carries
	// neither who said it nor when; questions about it name both ("When did
	// Caroline go to ..."). Measured on the LoCoMo dev conversations in
	// bench/README.md.
	EmbedSenderDate EmbedContext = "sender-date"
)

func (c EmbedContext) check() error {
	switch c {
	case "", EmbedContent, EmbedSenderDate:
		return nil
	}
	return invalid("Options.EmbedContext", "must be %q or %q, got %q", EmbedContent, EmbedSenderDate, c)
}

// embedText is the text embedded for m under c.
func embedText(c EmbedContext, m QueuedMessage) string {
	if c != EmbedSenderDate {
		return m.Content
	}
	return m.Sender + " (" + m.CreatedAt.UTC().Format("2 January 2006") + "): " + m.Content
}
