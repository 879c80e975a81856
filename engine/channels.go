package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/engine/redact"
)

// CreateChannel creates a plain channel. It returns ErrExists if the id is
// taken and an *InvalidError for a bad id or one in the agent-notes: or
// project: namespaces (those channels are created on first write).
func (e *Engine) CreateChannel(ctx context.Context, in NewChannel) (Channel, error) {
	if err := ValidateNewChannel(in); err != nil {
		return Channel{}, err
	}
	if e.opts.Redactor != nil {
		var rep redact.Report
		in.ID = e.redactName(in.ID, channelRE.MatchString, &rep)
		in.Project = e.redactName(in.Project, projectRE.MatchString, &rep)
		in.Name, _ = e.opts.Redactor.Redact(in.Name)
		in.Description, _ = e.opts.Redactor.Redact(in.Description)
	}
	name := in.Name
	if name == "" {
		name = in.ID
	}
	done, err := e.enterStore()
	if err != nil {
		return Channel{}, err
	}
	defer done()
	c := Channel{ID: in.ID, ChannelType: ChannelPlain, Name: name, Description: in.Description, ProjectID: in.Project,
		CreatedAt: fromMillis(e.opts.Now().UnixMilli())}
	created, err := e.store.CreateChannel(ctx, c)
	if err != nil {
		return Channel{}, err
	}
	if !created {
		return Channel{}, fmt.Errorf("channel %q: %w", in.ID, ErrExists)
	}
	return c, nil
}

// ValidateNewChannel checks in as CreateChannel does, without writing: an
// *InvalidError for bad input.
func ValidateNewChannel(in NewChannel) error {
	spec, err := parseChannel("id", in.ID)
	if err != nil {
		return err
	}
	if spec.typ != ChannelPlain {
		return invalid("id", "the %s and %s namespaces are created on first write, not by CreateChannel", notesPrefix, projectPrefix)
	}
	if err := checkProject("project", in.Project); err != nil {
		return err
	}
	if len(in.Name) > 256 || len(in.Description) > 4096 {
		return invalid("name/description", "name must be at most 256 bytes and description at most 4096")
	}
	return nil
}

// GetChannel returns one channel or ErrNotFound.
func (e *Engine) GetChannel(ctx context.Context, id string) (Channel, error) {
	if _, err := parseChannel("channel", id); err != nil {
		return Channel{}, err
	}
	done, err := e.enterStore()
	if err != nil {
		return Channel{}, err
	}
	defer done()
	c, ok, err := e.store.Channel(ctx, id)
	if err != nil {
		return Channel{}, err
	}
	if !ok {
		return Channel{}, fmt.Errorf("channel %q: %w", id, ErrNotFound)
	}
	return c, nil
}

// Scope kinds for ListChannels.
const (
	ScopeAll     = "all"
	ScopeNotes   = "notes"
	ScopeProject = "project"
)

// ListChannels returns the channels in scope ordered by id.
func (e *Engine) ListChannels(ctx context.Context, scope Scope) ([]Channel, error) {
	var keep []func(Channel) bool
	switch scope.Kind {
	case "", ScopeAll:
		if scope.Project != "" {
			keep = append(keep, func(c Channel) bool { return c.ProjectID == scope.Project })
		}
	case ScopeNotes:
		keep = append(keep, func(c Channel) bool { return c.ChannelType == ChannelAgentNotes })
		if scope.Project != "" {
			keep = append(keep, func(c Channel) bool { return c.OwnerAgentProjectID == scope.Project })
		}
	case ScopeProject:
		keep = append(keep, func(c Channel) bool { return c.ProjectID != "" && c.ChannelType != ChannelAgentNotes })
		if scope.Project != "" {
			keep = append(keep, func(c Channel) bool { return c.ProjectID == scope.Project })
		}
	default:
		return nil, invalid("scope", "must be all, notes or project, got %q", scope.Kind)
	}
	if err := checkProject("project", scope.Project); err != nil {
		return nil, err
	}
	if scope.Agent != "" {
		if err := CheckAgent("agent", scope.Agent); err != nil {
			return nil, err
		}
		keep = append(keep, func(c Channel) bool { return c.OwnerAgentName == scope.Agent })
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	all, err := e.store.Channels(ctx)
	if err != nil {
		return nil, err
	}
	out := []Channel{}
	for _, c := range all {
		if !slices.ContainsFunc(keep, func(k func(Channel) bool) bool { return !k(c) }) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Channel) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// ListAgents returns the agents that wrote, ordered by name then project;
// with project != "" only that project's.
func (e *Engine) ListAgents(ctx context.Context, project string) ([]Agent, error) {
	if err := checkProject("project", project); err != nil {
		return nil, err
	}
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	return e.store.Agents(ctx, project)
}
