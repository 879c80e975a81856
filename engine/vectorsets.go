package engine

import (
	"math"
	"time"
)

// Vector set states (vector_sets.state, migration 0003).
const (
	SetBuilding = "building"
	SetActive   = "active"
	SetRetired  = "retired"
)

// VectorSet describes one vecstore collection of message vectors made by
// one embedding model.
type VectorSet struct {
	ID         int64  `json:"id"`
	ModelID    string `json:"model_id"`
	Dim        int    `json:"dim"`
	Collection string `json:"collection"`
	// State is SetActive (answers semantic queries), SetBuilding (being
	// filled; replaces the active set when complete) or SetRetired.
	State       string    `json:"state"`
	CreatedAt   time.Time `json:"created_at"`
	ActivatedAt time.Time `json:"activated_at,omitzero"`
	// Pending is the number of outbox rows (messages still to embed, or
	// vectors still to delete).
	Pending int64 `json:"pending"`
}

// Cosine is the cosine similarity of a and b: 0 when their lengths differ
// or either is empty or zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
