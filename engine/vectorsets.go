package engine

import (
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
