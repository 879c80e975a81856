package chromaapi

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// Responses are written by hand: Chroma's layout (field order, floats always
// with a point or exponent, float32 vectors in shortest form, strings escaped
// as serde_json does) and speed for large results.

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way serde_json does: only '"',
// '\\' and control characters are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	if !utf8.ValidString(s[start:]) {
		// Cannot happen for data that came in as JSON; keep output valid.
		for _, r := range s[start:] {
			b = utf8.AppendRune(b, r)
		}
	} else {
		b = append(b, s[start:]...)
	}
	return append(b, '"')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendNullableStrings(b []byte, ss []*string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		if s == nil {
			b = append(b, "null"...)
		} else {
			b = appendString(b, *s)
		}
	}
	return append(b, ']')
}

func appendVector(b []byte, v []float32) []byte {
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, float64(f), 32)
	}
	return append(b, ']')
}

func appendVectors(b []byte, vs [][]float32) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		if v == nil {
			b = append(b, "null"...)
		} else {
			b = appendVector(b, v)
		}
	}
	return append(b, ']')
}

func appendValue(b []byte, v where.Value) []byte {
	switch v.Kind {
	case where.KindString:
		return appendString(b, v.Str)
	case where.KindInt:
		return strconv.AppendInt(b, v.Int, 10)
	case where.KindFloat:
		if v.Float == 0 {
			// Chroma keeps metadata in SQLite, which drops the sign of -0.0.
			return append(b, "0.0"...)
		}
		return appendFloat(b, v.Float, 64)
	case where.KindBool:
		return strconv.AppendBool(b, v.Bool)
	}
	return append(b, "null"...)
}

// appendMetadata writes a metadata map (keys sorted; Chroma's order is a
// hash map's) or null.
func appendMetadata(b []byte, md chroma.Metadata) []byte {
	if md == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, md[k])
	}
	return append(b, '}')
}

func appendMetadatas(b []byte, ms []chroma.Metadata) []byte {
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMetadata(b, m)
	}
	return append(b, ']')
}

func appendIncludes(b []byte, inc []chroma.Include) []byte {
	b = append(b, '[')
	for i, s := range inc {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(s))
	}
	return append(b, ']')
}

// appendCollection writes Chroma's Collection object.
func appendCollection(b []byte, c *chroma.Collection) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, c.Name)
	hc := c.Config.HNSW
	b = append(b, `,"configuration_json":{"hnsw":{"space":`...)
	b = appendString(b, string(hc.Space))
	b = append(b, `,"ef_construction":`...)
	b = strconv.AppendInt(b, int64(hc.EfConstruction), 10)
	b = append(b, `,"ef_search":`...)
	b = strconv.AppendInt(b, int64(hc.EfSearch), 10)
	b = append(b, `,"max_neighbors":`...)
	b = strconv.AppendInt(b, int64(hc.MaxNeighbors), 10)
	b = append(b, `,"resize_factor":`...)
	b = appendFloat(b, hc.ResizeFactor, 64)
	b = append(b, `,"sync_threshold":`...)
	b = strconv.AppendInt(b, int64(hc.SyncThreshold), 10)
	b = append(b, `},"spann":null,"embedding_function":`...)
	if len(c.Config.EmbeddingFunction) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, c.Config.EmbeddingFunction...)
	}
	b = append(b, `},"metadata":`...)
	if len(c.Metadata) == 0 {
		b = append(b, "null"...)
	} else {
		b = appendMetadata(b, c.Metadata)
	}
	b = append(b, `,"dimension":`...)
	if c.Dimension == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(c.Dimension), 10)
	}
	b = append(b, `,"tenant":`...)
	b = appendString(b, c.Tenant)
	b = append(b, `,"database":`...)
	b = appendString(b, c.Database)
	return append(b, `,"log_position":0,"version":0}`...)
}

// appendGetResult writes Chroma's GetResponse.
func appendGetResult(b []byte, r *chroma.GetResult) []byte {
	b = append(b, `{"ids":`...)
	b = appendStrings(b, r.IDs)
	b = append(b, `,"embeddings":`...)
	if r.Embeddings == nil {
		b = append(b, "null"...)
	} else {
		b = appendVectors(b, r.Embeddings)
	}
	b = append(b, `,"documents":`...)
	if r.Documents == nil {
		b = append(b, "null"...)
	} else {
		b = appendNullableStrings(b, r.Documents)
	}
	b = append(b, `,"uris":`...)
	if r.URIs == nil {
		b = append(b, "null"...)
	} else {
		b = appendNullableStrings(b, r.URIs)
	}
	b = append(b, `,"metadatas":`...)
	if r.Metadatas == nil {
		b = append(b, "null"...)
	} else {
		b = appendMetadatas(b, r.Metadatas)
	}
	b = append(b, `,"include":`...)
	b = appendIncludes(b, r.Include)
	return append(b, '}')
}

// appendQueryResult writes Chroma's QueryResponse.
func appendQueryResult(b []byte, r *chroma.QueryResult) []byte {
	b = append(b, `{"ids":[`...)
	for i, ids := range r.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStrings(b, ids)
	}
	b = append(b, `],"embeddings":`...)
	if r.Embeddings == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, vs := range r.Embeddings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendVectors(b, vs)
		}
		b = append(b, ']')
	}
	b = append(b, `,"documents":`...)
	if r.Documents == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, ds := range r.Documents {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNullableStrings(b, ds)
		}
		b = append(b, ']')
	}
	b = append(b, `,"uris":`...)
	if r.URIs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, us := range r.URIs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNullableStrings(b, us)
		}
		b = append(b, ']')
	}
	b = append(b, `,"metadatas":`...)
	if r.Metadatas == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, ms := range r.Metadatas {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMetadatas(b, ms)
		}
		b = append(b, ']')
	}
	b = append(b, `,"distances":`...)
	if r.Distances == nil {
		b = append(b, "null"...)
	} else {
		b = appendVectors(b, r.Distances)
	}
	b = append(b, `,"include":`...)
	b = appendIncludes(b, r.Include)
	return append(b, '}')
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// numberBytes is what one embedding number or distance counts toward an
// answer's size: its JSON text is at most about this long.
const numberBytes = 16

// answerBytes counts the bytes a get answer (or one row of a query answer)
// carries: ids, documents, uris, metadata keys and string values, and
// numberBytes per other value, embedding number and distance. JSON quoting
// and escaping come on top, so the JSON built is at least this long.
func answerBytes(ids []string, embs [][]float32, docs, uris []*string, metas []chroma.Metadata, dists []float32) int64 {
	n := int64(numberBytes * len(dists))
	for _, s := range ids {
		n += int64(len(s))
	}
	for _, v := range embs {
		n += int64(numberBytes * len(v))
	}
	for _, list := range [][]*string{docs, uris} {
		for _, s := range list {
			if s != nil {
				n += int64(len(*s))
			}
		}
	}
	for _, m := range metas {
		for k, v := range m {
			n += int64(len(k)+len(v.Str)) + numberBytes
		}
	}
	return n
}

// getAnswerBytes is answerBytes of a get result.
func getAnswerBytes(r *chroma.GetResult) int64 {
	return answerBytes(r.IDs, r.Embeddings, r.Documents, r.URIs, r.Metadatas, nil)
}

// queryAnswerBytes is answerBytes summed over a query result's rows; it
// stops counting once past limit.
func queryAnswerBytes(r *chroma.QueryResult, limit int64) int64 {
	var n int64
	for i := range r.IDs {
		row := func(l [][]*string) []*string {
			if l == nil {
				return nil
			}
			return l[i]
		}
		var embs [][]float32
		if r.Embeddings != nil {
			embs = r.Embeddings[i]
		}
		var metas []chroma.Metadata
		if r.Metadatas != nil {
			metas = r.Metadatas[i]
		}
		var dists []float32
		if r.Distances != nil {
			dists = r.Distances[i]
		}
		n += answerBytes(r.IDs[i], embs, row(r.Documents), row(r.URIs), metas, dists)
		if n > limit {
			break
		}
	}
	return n
}
