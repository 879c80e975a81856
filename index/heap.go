package index

// cand is a node and its distance to the query.
type cand struct {
	d  float32
	id uint32
}

// less orders candidates by distance, then id, so results are deterministic.
func (a cand) less(b cand) bool {
	return a.d < b.d || (a.d == b.d && a.id < b.id)
}

// minHeap is a binary min-heap of candidates (closest at [0]). It avoids
// container/heap's interface calls.
type minHeap []cand

func (h *minHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// maxHeap is a binary max-heap of candidates (farthest at [0]).
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[p].less(s[i]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	*h = s
	h.down()
	return top
}

// keep adds c to a heap that holds the k nearest candidates seen so far.
func (h *maxHeap) keep(c cand, k int) {
	if len(*h) < k {
		h.push(c)
	} else if c.less((*h)[0]) {
		h.replaceTop(c)
	}
}

// replaceTop replaces the farthest candidate with c.
func (h *maxHeap) replaceTop(c cand) {
	(*h)[0] = c
	h.down()
}

func (h *maxHeap) down() {
	s := *h
	n := len(s)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[l].less(s[r]) {
			m = r
		}
		if !s[i].less(s[m]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// drainSorted empties h into dst in ascending order and returns dst.
func (h *maxHeap) drainSorted(dst []cand) []cand {
	n := len(*h)
	if cap(dst) < n {
		dst = make([]cand, n)
	}
	dst = dst[:n]
	for i := n - 1; i >= 0; i-- {
		dst[i] = h.pop()
	}
	return dst
}
