// Package gitcrumbs checks the breadcrumbs of messages against a git
// repository, offline: a file breadcrumb's path still exists at HEAD (or was
// renamed: the new path is followed), its line range still exists and its
// text is unchanged since the note's base commit (its first commit
// breadcrumb that resolves, else the newest commit of HEAD's history at or
// before the note's time), and a commit breadcrumb exists and is reachable
// from HEAD. Issues, pull requests, URLs and other kinds were checked for
// form when written and are reported as such.
//
// The results feed the engine's marks cache (engine/crumbmarks.go), which
// searches and message reads attach without running git: HeadFile reads
// HEAD from the repository's files (cheap enough for every read, safe for
// concurrent use), Refresh checks the messages not yet marked at HEAD, and
// a Refresher (cairn serve, cairn mcp) runs Refresh in the background and
// owns its goroutine until Stop.
//
// Git is read with go-git (pure Go: no cgo, no git binary on PATH). A
// Checker caches what it learns of one HEAD and is not safe for concurrent
// use. It imports engine (for messages, breadcrumb kinds and the marks
// cache) and nothing else of cairn; it never writes to the repository.
package gitcrumbs
