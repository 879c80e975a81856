package chroma

// AnswerBudget counts the bytes a get or query result carries while a
// store builds it (GetRequest.MaxAnswerBytes, QueryRequest.MaxAnswerBytes),
// so that the store stops copying records once the result is over the
// bound instead of after it has copied every one: one large document asked
// for by many query embeddings is copied about bound/size times, not once
// per embedding. It counts ids, documents, uris, metadata keys and string
// values, 8 bytes per other metadata value and 4 per embedding number,
// which is no more than the answer's JSON text holds, so a caller that
// counts its answer the same way or more sees a result cut short as over
// the bound. A nil budget or a zero limit counts nothing. Both stores
// (vecstore, pgcollections) count with it, so they cut a result short at
// the same record.
type AnswerBudget struct {
	limit, used int64
}

// NewAnswerBudget returns a budget of limit bytes (0: unbounded).
func NewAnswerBudget(limit int64) *AnswerBudget { return &AnswerBudget{limit: limit} }

// Spend counts the last record appended to res and reports whether the
// result is now over the budget: the store then stops appending and
// returns the result as it stands.
func (b *AnswerBudget) Spend(res *GetResult) bool {
	if b == nil || b.limit <= 0 || len(res.IDs) == 0 {
		return false
	}
	i := len(res.IDs) - 1
	var doc, uri *string
	var md Metadata
	if res.Documents != nil {
		doc = res.Documents[i]
	}
	if res.URIs != nil {
		uri = res.URIs[i]
	}
	if res.Metadatas != nil {
		md = res.Metadatas[i]
	}
	n := RecordBytes(res.IDs[i], doc, uri, md)
	if res.Embeddings != nil {
		n += 4 * int64(len(res.Embeddings[i]))
	}
	b.used += n
	return b.used > b.limit
}

// SpendRecord counts a record a store has decoded for a result before it
// copies it there (its id, document, uri and metadata: RecordBytes) and
// reports whether the budget is now exceeded.
func (b *AnswerBudget) SpendRecord(id string, doc, uri *string, md Metadata) bool {
	if b == nil || b.limit <= 0 {
		return false
	}
	b.used += RecordBytes(id, doc, uri, md)
	return b.used > b.limit
}

// Left returns the bytes the result may still take before it is over
// the budget (-1 when unbounded).
func (b *AnswerBudget) Left() int64 {
	if b == nil || b.limit <= 0 {
		return -1
	}
	return max(b.limit-b.used, 0)
}

// Used returns the bytes counted so far.
func (b *AnswerBudget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used
}

// RecordBytes is what a budget counts of a record, its embedding aside.
func RecordBytes(id string, doc, uri *string, md Metadata) int64 {
	n := int64(len(id)) + metadataBytes(md)
	for _, s := range []*string{doc, uri} {
		if s != nil {
			n += int64(len(*s))
		}
	}
	return n
}

func metadataBytes(m Metadata) int64 {
	var n int64
	for k, v := range m {
		n += int64(len(k)+len(v.Str)) + 8
	}
	return n
}
