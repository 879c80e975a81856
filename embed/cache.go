package embed

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// lru is a fixed-capacity LRU of vectors keyed by the SHA-256 of the text
// (with its prompt). Safe for concurrent use.
type lru struct {
	mu struct {
		sync.Mutex
		items map[[32]byte]*list.Element
		order *list.List // front = most recent
	}
	cap int
}

type lruEntry struct {
	key [32]byte
	vec []float32
}

func newLRU(capacity int) *lru {
	c := &lru{cap: capacity}
	c.mu.items = make(map[[32]byte]*list.Element)
	c.mu.order = list.New()
	return c
}

func cacheKey(prompt, text string) [32]byte {
	h := sha256.New()
	h.Write([]byte(prompt))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *lru) get(k [32]byte) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.items[k]
	if !ok {
		return nil, false
	}
	c.mu.order.MoveToFront(e)
	return e.Value.(*lruEntry).vec, true
}

func (c *lru) put(k [32]byte, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.mu.items[k]; ok {
		e.Value.(*lruEntry).vec = v
		c.mu.order.MoveToFront(e)
		return
	}
	c.mu.items[k] = c.mu.order.PushFront(&lruEntry{k, v})
	for c.mu.order.Len() > c.cap {
		last := c.mu.order.Back()
		c.mu.order.Remove(last)
		delete(c.mu.items, last.Value.(*lruEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.order.Len()
}
