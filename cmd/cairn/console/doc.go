// Package console is the web console of `cairn serve`: a few static files
// (HTML, CSS and JavaScript, no build step and nothing fetched from
// elsewhere) embedded in the binary and served at / and under /console/.
// The page talks to cairn's own HTTP API (/api/cairn/v1) only, with the
// token a person types once (kept in the tab's sessionStorage and sent as
// Authorization: Bearer, never in a URL); the files themselves hold no data
// and are served without the token, behind the same Host and Origin checks
// as the APIs.
//
// Every answer carries a Content-Security-Policy that allows scripts,
// styles, images and fetches from the server's own origin only and no
// framing (a page that framed the console could trick a click on Delete).
//
// A Handler is safe for concurrent use. The package imports only the
// standard library.
package console
