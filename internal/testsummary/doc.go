// Command testsummary runs `go test -json` for make test and sums up where the
// time went.
//
//	go run ./internal/testsummary run -log FILE -- go test -json [flags] [packages]
//	go run ./internal/testsummary report [-since UNIX_SECONDS] FILE...
//
// run starts the command, keeps every JSON event it prints in FILE and
// prints what plain `go test` would have printed: the "ok", "FAIL" and
// "?" line of every package, and the output of failed tests only. It exits
// with the command's status, or 1 when the command exited 0 yet a test or
// package failed. The command's standard error passes through unchanged.
//
// report reads the event files of one or more runs and prints each package's
// wall time per run, the slowest top-level tests, every failed test and the
// total wall time (with the load average where /proc/loadavg exists).
//
// It imports only the standard library, and is a tool of the Makefile, not
// part of cairn.
package main
