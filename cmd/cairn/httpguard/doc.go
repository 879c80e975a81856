// Package httpguard holds the request checks that cairn's two HTTP APIs
// (the Chroma API and cairn's own API) share, so that each rule is written
// once: the Authorization parser, the JSON Content-Type rule, and the
// server-wide budget of request body bytes buffered at once.
//
// Authorization: a request carries the token as "Authorization: Bearer
// TOKEN" or "X-Chroma-Token: TOKEN". The scheme is matched without regard to
// case (RFC 7235 section 2.1), followed by exactly one space and a token
// with no spaces or control characters (RFC 6750's b64token is stricter;
// we accept any visible ASCII so that existing tokens keep working). When
// both headers are present, both must carry the token. Anything else
// (another scheme, two spaces, a trailing space, an empty token) is
// refused: strict and the same on both APIs.
//
// Everything here is safe for concurrent use. The package imports the
// standard library only.
package httpguard
