package engine

import "sort"

// ProjectlessChunk is a session chunk message stored without a project,
// with the working directory its session records name: the record's own
// cwd, else its session's ("" when neither names one).
type ProjectlessChunk struct {
	ID        int64
	Sender    string
	CreatedAt int64 // Unix ms
	CWD       string
}

// ProjectMove is what a project backfill writes for one sender and
// project: the project of the messages IDs, whose times span First to
// Last (Unix ms), and their count moved from the sender's project-less
// agent row to its row in the project.
type ProjectMove struct {
	Sender, Project string
	IDs             []int64
	First, Last     int64
}

// PlanSessionProjects groups chunks by sender and the project of their
// working directory (ProjectOf, once per directory), by sender then
// project; chunks without a project are left out. Both stores' migrations
// apply it (engine/sqlite/migrations/0010_session_projects.sql and PostgreSQL's
// 0009).
func PlanSessionProjects(chunks []ProjectlessChunk) []ProjectMove {
	projects := map[string]string{}
	moves := map[[2]string]*ProjectMove{}
	for _, c := range chunks {
		p, seen := projects[c.CWD]
		if !seen {
			p, _ = ProjectOf(c.CWD)
			projects[c.CWD] = p
		}
		if p == "" {
			continue
		}
		k := [2]string{c.Sender, p}
		mv := moves[k]
		if mv == nil {
			mv = &ProjectMove{Sender: c.Sender, Project: p, First: c.CreatedAt, Last: c.CreatedAt}
			moves[k] = mv
		}
		mv.IDs = append(mv.IDs, c.ID)
		mv.First, mv.Last = min(mv.First, c.CreatedAt), max(mv.Last, c.CreatedAt)
	}
	out := make([]ProjectMove, 0, len(moves))
	for _, mv := range moves {
		out = append(out, *mv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sender != out[j].Sender {
			return out[i].Sender < out[j].Sender
		}
		return out[i].Project < out[j].Project
	})
	return out
}
