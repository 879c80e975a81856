// Package reqlog records what an HTTP handler answered (the status code and
// the body bytes) for request logs and metrics.
//
// One Recorder serves a whole request: Wrap returns the Recorder already
// wrapping a ResponseWriter, so the outer middleware (server) and an API
// handler that logs its own routes (chromaapi) share it. A Recorder belongs
// to one request and is not safe for concurrent use. It imports only the
// standard library.
package reqlog
