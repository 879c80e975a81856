package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Canonical re-encodes a JSON value with object keys sorted, numbers kept as
// written, no HTML escaping and no insignificant white space. It is
// idempotent: Canonical(Canonical(x)) == Canonical(x).
func Canonical(data []byte) ([]byte, error) {
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	return encodeAny(v)
}

func decodeAny(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON value", ErrCorrupt)
	}
	return v, nil
}

func encodeAny(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SplitContent splits a record into its envelope (the record without its
// content) and its content, both canonical. The content is message.content
// when the record has a message object, the "summary" of summary records,
// or else the top-level "content" (system records). content is nil when the
// record has none. JoinContent(SplitContent(x)) == Canonical(x).
func SplitContent(record []byte) (envelope, content []byte, err error) {
	v, err := decodeAny(record)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%w: record is not an object", ErrCorrupt)
	}
	parent, key := contentSlot(obj)
	if c, ok := parent[key]; ok {
		if content, err = encodeAny(c); err != nil {
			return nil, nil, err
		}
		delete(parent, key)
	}
	if envelope, err = encodeAny(obj); err != nil {
		return nil, nil, err
	}
	return envelope, content, nil
}

// JoinContent puts content (nil for none) back into envelope and returns
// the canonical record.
func JoinContent(envelope, content []byte) ([]byte, error) {
	v, err := decodeAny(envelope)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: envelope is not an object", ErrCorrupt)
	}
	if content != nil {
		c, err := decodeAny(content)
		if err != nil {
			return nil, err
		}
		parent, key := contentSlot(obj)
		parent[key] = c
	}
	return encodeAny(obj)
}

func contentSlot(obj map[string]any) (map[string]any, string) {
	if m, ok := obj["message"].(map[string]any); ok {
		return m, "content"
	}
	if obj["type"] == "summary" {
		return obj, "summary"
	}
	return obj, "content"
}
