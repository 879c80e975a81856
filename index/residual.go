package index

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// An SQ8Residual row codes the residual of a vector to its nearest trained
// centroid c_k (k-means over the index's vectors) with SQ8's per-vector
// range: x̂ = s*(c_k + lo + step*codes). Its layout is SQ8's row, the
// centroid id (uint16) after the codes:
//
//	lo   float32  s*lo of the residual
//	step float32  s*step of the residual
//	t    float32  cosine: s (scaling x̂ to unit norm); L2: |x̂|²; IP: unused
//	c    [dim]uint8
//	k    uint16   centroid, noCentroid for none (x̂ is the residual alone)
//
// so q·x̂ = s*(q·c_k) + lo*sum(q) + step*(q·codes), q·c_k computed once per
// query and centroid, when first needed.
const (
	residualCentroids = 1024
	noCentroid        = math.MaxUint16
	// trainSample bounds the vectors k-means reads.
	trainSample = 16384
	trainIters  = 8
	// trainSettled stops k-means early once at most one sample in
	// trainSettled changed centroid in an iteration (clustered data
	// settles in about three iterations, to the same residual error as
	// eight).
	trainSettled = 1000
	// trainAt is the number of vectors an index trains at: four per
	// centroid.
	trainAt = 4 * residualCentroids
)

// residualRecord is the bytes before the codes in a serialized sq8r vector.
const residualRecord = sq8Header + 2

func residualStride(dim int) int { return (sq8Header + dim + 2 + 3) &^ 3 }

// centroidOf returns row's centroid, noCentroid for none (or for the
// zero row of a slot never written).
// REQUIRES: x.mu held.
func (x *Index) centroidOf(row []byte) int {
	k := int(binary.LittleEndian.Uint16(row[sq8Header+x.dim:]))
	if k >= len(x.mu.halfNorm) {
		return noCentroid
	}
	return k
}

// centroidDot returns q·c_k, computing it on first use.
// REQUIRES: x.mu held.
func (x *Index) centroidDot(q query, k int) float32 {
	if k == noCentroid {
		return 0
	}
	d := q.qc.vals[k]
	if d != d { // NaN: not yet computed
		if codes := x.mu.centroidCodes; codes != nil {
			stride := sq8Stride(x.dim)
			row := codes[k*stride : (k+1)*stride]
			lo, step, _ := params(row)
			d = lo*q.sum + step*x.kern.dotU8(q.v, row[sq8Header:sq8Header+x.dim])
		} else {
			d = x.kern.dot(q.v, x.mu.centroids[k*x.dim:(k+1)*x.dim])
		}
		q.qc.vals[k] = d
		q.qc.touched = append(q.qc.touched, uint16(k))
	}
	return d
}

// residualDist is sq8Dist for an SQ8Residual row.
func (x *Index) residualDist(q query, row []byte, raw float32) float32 {
	lo, step, t := params(row)
	cd := x.centroidDot(q, x.centroidOf(row))
	switch {
	case x.norm:
		return 1 - (t*cd + lo*q.sum + step*raw)
	case x.isL2:
		return max(0, q.sq-2*(cd+lo*q.sum+step*raw)+t)
	}
	return 1 - (cd + lo*q.sum + step*raw)
}

// decodeResidual writes row's decoded vector into dst.
// REQUIRES: x.mu held.
func (x *Index) decodeResidual(dst []float32, row []byte) {
	lo, step, t := params(row)
	codes := row[sq8Header : sq8Header+x.dim]
	dst = dst[:len(codes)]
	k := x.centroidOf(row)
	if k == noCentroid {
		for i, c := range codes {
			dst[i] = lo + step*float32(c)
		}
		return
	}
	s := float32(1)
	if x.norm {
		s = t
	}
	cent := x.mu.centroids[k*x.dim : (k+1)*x.dim]
	cent = cent[:len(codes)]
	for i, c := range codes {
		dst[i] = lo + step*float32(c) + s*cent[i]
	}
}

// fillCentroidDots computes q·c_k for every centroid in one batched kernel
// call and returns the centroid nearest q (L2), or noCentroid when
// untrained. An insert needs its vector's nearest centroid to code it, and
// its searches then need the dots with the centroids of every row they
// meet: one pass gives both.
// REQUIRES: x.mu held; q.qc set.
func (x *Index) fillCentroidDots(q query) int {
	kc := len(x.mu.halfNorm)
	if kc == 0 {
		return noCentroid
	}
	vals := q.qc.vals[:kc]
	if codes := x.mu.centroidCodes; codes != nil {
		stride := sq8Stride(x.dim)
		x.kern.dotU8Batch(q.v, codes, stride, sq8Header, x.mu.centroidIDs, vals)
		for k, raw := range vals {
			lo, step, _ := params(codes[k*stride:])
			vals[k] = lo*q.sum + step*raw
		}
	} else {
		x.kern.dotBatch(q.v, x.mu.centroids, x.dim, x.mu.centroidIDs, vals)
	}
	q.qc.full = true
	best, bd := noCentroid, float32(math.Inf(-1))
	for k, d := range vals {
		if s := d - x.mu.halfNorm[k]; s > bd {
			best, bd = k, s
		}
	}
	return best
}

// nearestCentroid returns the centroid nearest v (L2), or noCentroid.
// REQUIRES: x.mu held.
func (x *Index) nearestCentroid(v []float32) int {
	var qc centroidDots
	return x.nearestCentroidBuf(v, &qc)
}

// nearestCentroidBuf is nearestCentroid computing the dots in qc.
// REQUIRES: x.mu held.
func (x *Index) nearestCentroidBuf(v []float32, qc *centroidDots) int {
	qc.reset()
	var sum float32
	for _, f := range v {
		sum += f
	}
	return x.fillCentroidDots(query{v: v, sum: sum, qc: qc})
}

// encodeResidual writes v's row coded against centroid k (noCentroid:
// none) into row; buf (len dim, or nil) holds the residual.
// REQUIRES: x.mu held.
func (x *Index) encodeResidual(row []byte, v []float32, k int, buf []float32) {
	r := buf
	if r == nil {
		r = make([]float32, x.dim)
	}
	copy(r, v)
	var c []float32
	if k != noCentroid {
		c = x.mu.centroids[k*x.dim : (k+1)*x.dim]
		for i := range r {
			r[i] -= c[i]
		}
	}
	encodeSQ8(row[:sq8Header+x.dim], r, false)
	lo, step, _ := params(row)
	codes := row[sq8Header : sq8Header+x.dim]
	var n2 float64
	for i, b := range codes {
		d := float64(lo + step*float32(b))
		if c != nil {
			d += float64(c[i])
		}
		n2 += d * d
	}
	t := float32(n2)
	if x.norm && n2 > 0 {
		s := 1 / math.Sqrt(n2)
		lo, step, t = float32(float64(lo)*s), float32(float64(step)*s), float32(s)
	}
	le := binary.LittleEndian
	le.PutUint32(row[0:], math.Float32bits(lo))
	le.PutUint32(row[4:], math.Float32bits(step))
	le.PutUint32(row[8:], math.Float32bits(t))
	le.PutUint16(row[sq8Header+x.dim:], uint16(k))
}

// trainLocked sets the centroids by k-means over (a sample of) vecs, when
// there are enough of them and none are set.
// REQUIRES: x.mu held exclusively.
func (x *Index) trainLocked(vecs [][]float32) {
	if len(x.mu.halfNorm) > 0 || len(vecs) < trainAt {
		return
	}
	cent := x.kmeans(vecs)
	quantizeCentroids(cent, x.dim)
	x.setCentroidsLocked(cent)
}

// kmeans returns residualCentroids centroids (k*dim) fitted to a sample
// of the prepared vectors vecs (at least residualCentroids of them).
func (x *Index) kmeans(vecs [][]float32) []float32 {
	step := max(1, len(vecs)/trainSample)
	var sample [][]float32
	for i := 0; i < len(vecs); i += step {
		sample = append(sample, vecs[i])
	}
	dim, kc := x.dim, residualCentroids
	cent := make([]float32, kc*dim)
	for k := range kc {
		copy(cent[k*dim:], sample[k*len(sample)/kc])
	}
	half := make([]float32, kc)
	ids := make([]uint32, kc)
	for k := range ids {
		ids[k] = uint32(k)
	}
	assign := make([]int, len(sample))
	for j := range assign {
		assign[j] = -1
	}
	workers := x.opts.Workers
	for range trainIters {
		var moved atomic.Int64
		for k := range kc {
			half[k] = x.kern.dot(cent[k*dim:(k+1)*dim], cent[k*dim:(k+1)*dim]) / 2
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dots := make([]float32, kc)
				for j := w; j < len(sample); j += workers {
					x.kern.dotBatch(sample[j], cent, dim, ids, dots)
					best, bd := 0, float32(math.Inf(-1))
					for k, d := range dots {
						if s := d - half[k]; s > bd {
							best, bd = k, s
						}
					}
					if assign[j] != best {
						assign[j] = best
						moved.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if moved.Load()*trainSettled <= int64(len(sample)) {
			break // the centroids would hardly move again
		}
		sum := make([]float64, kc*dim)
		cnt := make([]int, kc)
		for j, a := range assign {
			cnt[a]++
			for i, f := range sample[j] {
				sum[a*dim+i] += float64(f)
			}
		}
		for k := range kc {
			if cnt[k] == 0 {
				continue // keeps its previous position
			}
			for i := range dim {
				cent[k*dim+i] = float32(sum[k*dim+i] / float64(cnt[k]))
			}
		}
	}
	return cent
}

// trainOnInsertLocked trains the centroids when an untrained index reaches
// trainAt vectors with the batch being inserted (ids[i] for i in order,
// prepared), over its live vectors (decoded) and the batch's. An index
// filled one vector at a time trains on the insert that reaches trainAt;
// the rows it already holds keep no centroid (plain SQ8 of the vector, as
// exact as before: coding a decoded vector again would add a second
// rounding), the rows inserted from then on are residuals.
// REQUIRES: x.writeMu held, x.mu held exclusively, x.code == SQ8Residual.
func (x *Index) trainOnInsertLocked(ids []uint32, order []int, prepared [][]float32) {
	if len(x.mu.halfNorm) > 0 || x.Len()+len(order) < trainAt {
		return
	}
	vecs := make([][]float32, 0, x.Len()+len(order))
	for id, st := range x.mu.state {
		if st == stateLive {
			v := make([]float32, x.dim)
			x.decodeRowLocked(v, uint32(id))
			vecs = append(vecs, v)
		}
	}
	for _, i := range order {
		vecs = append(vecs, prepared[i])
	}
	x.trainLocked(vecs)
}

// Centroids returns a copy of an SQ8Residual index's centroid table
// (centroid k at [k*Dim, (k+1)*Dim)), nil until it has trained: an index
// trains when it first holds trainAt (4,096) vectors, on the insert that
// reaches them, or at Recode.
func (x *Index) Centroids() []float32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(x.mu.centroids)
}

// setCentroidsLocked installs the centroid table cent (k*dim). When every
// centroid is exactly the decoding of its SQ8 codes (as trained tables
// are: see quantizeCentroids), the codes are kept too: q·c_k is then
// lo_k*sum(q) + step_k*(q·codes_k), read from a table a quarter the size
// (it stays in cache) with the u8 kernels.
// REQUIRES: x.mu held exclusively (or x not shared yet).
func (x *Index) setCentroidsLocked(cent []float32) {
	half := make([]float32, len(cent)/x.dim)
	for k := range half {
		c := cent[k*x.dim : (k+1)*x.dim]
		half[k] = x.kern.dot(c, c) / 2
	}
	ids := make([]uint32, len(half))
	for k := range ids {
		ids[k] = uint32(k)
	}
	x.mu.centroids, x.mu.halfNorm, x.mu.centroidIDs = cent, half, ids
	x.mu.centroidCodes = exactCodes(cent, x.dim)
}

// quantizeCentroids replaces each centroid of cent (k*dim) by the decoding
// of its SQ8 codes, so that the table is exactly its 8-bit form.
func quantizeCentroids(cent []float32, dim int) {
	row := make([]byte, sq8Stride(dim))
	for k := 0; k < len(cent); k += dim {
		encodeSQ8(row, cent[k:k+dim], false)
		decodeSQ8(cent[k:k+dim], row)
	}
}

// exactCodes returns the SQ8 rows (sq8Stride(dim) bytes each) whose
// decodings are exactly the centroids of cent, or nil when one has none.
// Coding a decoded vector again gives back its codes and lo, but its step
// only to a few units in the last place (computed from the range), so the
// steps next to it are tried too.
func exactCodes(cent []float32, dim int) []byte {
	stride := sq8Stride(dim)
	codes := make([]byte, len(cent)/dim*stride)
	dec := make([]float32, dim)
	for k := 0; k*dim < len(cent); k++ {
		row := codes[k*stride : (k+1)*stride]
		c := cent[k*dim : (k+1)*dim]
		encodeSQ8(row, c, false)
		_, step, _ := params(row)
		found := false
		for _, s := range nearbySteps(step) {
			binary.LittleEndian.PutUint32(row[4:], math.Float32bits(s))
			decodeSQ8(dec, row)
			if slices.Equal(dec, c) {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return codes
}

// nearbySteps returns step and the floats up to four units in the last
// place on either side of it, nearest first.
func nearbySteps(step float32) []float32 {
	out := []float32{step}
	up, down := step, step
	for range 4 {
		up = math.Nextafter32(up, float32(math.Inf(1)))
		down = math.Nextafter32(down, float32(math.Inf(-1)))
		out = append(out, up, down)
	}
	return out
}

// assignParallel returns each prepared vector's nearest centroid.
// REQUIRES: x.mu held.
func (x *Index) assignParallel(vecs [][]float32) []int {
	out := make([]int, len(vecs))
	workers := x.opts.Workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var qc centroidDots
			for j := w; j < len(vecs); j += workers {
				out[j] = x.nearestCentroidBuf(vecs[j], &qc)
			}
		}()
	}
	wg.Wait()
	return out
}
