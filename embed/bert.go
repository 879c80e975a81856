package embed

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// linear is a Linear layer with its weight packed into column panels of
// nr values: panel p holds, for each input row k, W[p*nr:(p+1)*nr][k].
// The panels are float32 (w), or int8 (q) when the weights file stores the
// layer so: then qs holds, for each panel and group of `group` input rows,
// the nr scales of its columns, and a panel is dequantized (the value
// float32(q)*scale, exactly as a dequantized file would give) into a
// worker's scratch just before the rows are multiplied by it. That keeps a
// quarter of the bytes resident and streamed per pass, and skips
// dequantizing the model at load.
type linear struct {
	in, out int
	panels  int
	w       []float32 // panels * in * nr
	q       []byte    // or int8: panels * in * nr
	qs      []float32 // panels * (in/group) * nr
	i8      *i8Panels // or int8 for the integer kernel (see gemmi8.go)
	group   int
	bias    []float32 // panels * nr, zero-padded
}

// packLinear lays out a Linear layer for the kernels; geluInput says its
// input is a GELU output (see gemmi8.go).
func packLinear(w rawTensor, bias rawTensor, nr int, geluInput bool) (*linear, error) {
	if len(w.shape) != 2 || len(bias.shape) != 1 || bias.shape[0] != w.shape[0] {
		return nil, fmt.Errorf("%w: linear shapes %v / %v", ErrBadModel, w.shape, bias.shape)
	}
	out, in := w.shape[0], w.shape[1]
	l := &linear{in: in, out: out, panels: (out + nr - 1) / nr}
	l.bias = make([]float32, l.panels*nr)
	copy(l.bias, bias.float32s())
	if w.panels != nil {
		if w.panels.unsigned != geluInput {
			return nil, fmt.Errorf("%w: a packed Linear weight laid out for %s activations feeds on %s ones", ErrBadModel, signedness(w.panels.unsigned), signedness(geluInput))
		}
		l.i8, l.group = w.panels, w.group
		return l, nil
	}
	if w.q != nil && w.group > 0 && in%w.group == 0 {
		if w.group%4 == 0 {
			packI8Panels(l, w, geluInput)
		} else {
			packInt8Panels(l, w, nr)
		}
		return l, nil
	}
	l.w = make([]float32, l.panels*in*nr)
	row := make([]float32, in)
	for p := 0; p < l.panels; p++ {
		base := p * in * nr
		for j := 0; j < nr; j++ {
			o := p*nr + j
			if o >= out {
				break
			}
			w.row(o, row)
			for k, v := range row {
				l.w[base+k*nr+j] = v
			}
		}
	}
	return l, nil
}

// signedness names how a layer's activations are quantized.
func signedness(unsigned bool) string {
	if unsigned {
		return "unsigned (GELU output)"
	}
	return "signed"
}

// packInt8Panels lays out int8 tensor w (groups along each row) as l's
// int8 panels and their scales; padding columns are zero.
func packInt8Panels(l *linear, w rawTensor, nr int) {
	in, out, g := l.in, l.out, w.group
	groups := in / g
	l.group = g
	l.q = make([]byte, l.panels*in*nr)
	l.qs = make([]float32, l.panels*groups*nr)
	for o := 0; o < out; o++ {
		p, j := o/nr, o%nr
		dst := l.q[p*in*nr+j:]
		src := w.q[o*in : (o+1)*in]
		for k, v := range src {
			dst[k*nr] = v
		}
		sc := l.qs[p*groups*nr+j:]
		for gi := 0; gi < groups; gi++ {
			sc[gi*nr] = w.scale[o*groups+gi]
		}
	}
}

// panel returns panel p of l as float32 values: l's own, or dequantized
// into scratch (which must hold in*nr values).
func (l *linear) panel(k *kernelSet, p int, scratch []float32) []float32 {
	nr := k.nr
	if l.q == nil {
		return l.w[p*l.in*nr : (p+1)*l.in*nr]
	}
	groups := l.in / l.group
	dst := scratch[:l.in*nr]
	k.dequant(l.q[p*l.in*nr:(p+1)*l.in*nr], l.qs[p*groups*nr:(p+1)*groups*nr], l.group, dst)
	return dst
}

type layerNormW struct{ g, b []float32 }

type bertLayer struct {
	qkv, attnOut, inter, out *linear
	ln1, ln2                 layerNormW
}

// bert is cairn's own BERT encoder.
type bert struct {
	cfg       bertConfig
	k         *kernelSet
	workers   int
	word      []float32 // fp32 word embeddings, or:
	wordQ     rawTensor // int8 word embeddings (rows dequantized when looked up)
	pos       []float32
	typ       []float32 // token type 0 row
	embLN     layerNormW
	layers    []bertLayer
	bufPool   sync.Pool
	attnPool  sync.Pool
	panelPool sync.Pool // *[]float32: a dequantized int8 panel
	actPool   sync.Pool // *actBuf: quantized activations
}

func newBERT(cfg bertConfig, ts map[string]rawTensor, k *kernelSet, workers int) (*bert, error) {
	if cfg.ModelType != "" && cfg.ModelType != "bert" {
		return nil, fmt.Errorf("%w: model_type %q (the native encoder runs bert)", ErrUnsupported, cfg.ModelType)
	}
	if cfg.Act != "" && cfg.Act != "gelu" {
		return nil, fmt.Errorf("%w: hidden_act %q (the native encoder runs gelu)", ErrUnsupported, cfg.Act)
	}
	if cfg.PosType != "" && cfg.PosType != "absolute" {
		return nil, fmt.Errorf("%w: position_embedding_type %q", ErrUnsupported, cfg.PosType)
	}
	H := cfg.Hidden
	get := func(name string, shape ...int) (rawTensor, error) {
		t, ok := ts[name]
		if !ok {
			t, ok = ts["bert."+name]
		}
		if !ok && len(name) > 7 && name[len(name)-7:] == ".weight" {
			t, ok = ts[name[:len(name)-7]+".gamma"]
		}
		if !ok && len(name) > 5 && name[len(name)-5:] == ".bias" {
			if t2, ok2 := ts[name[:len(name)-5]+".beta"]; ok2 && len(shape) == 1 {
				t, ok = t2, true
			}
		}
		if !ok {
			return t, fmt.Errorf("%w: missing tensor %q", ErrBadModel, name)
		}
		if numel(t.shape) != numel(shape) || (len(t.shape) == len(shape) && fmt.Sprint(t.shape) != fmt.Sprint(shape)) {
			return t, fmt.Errorf("%w: tensor %q has shape %v, want %v", ErrBadModel, name, t.shape, shape)
		}
		return t, nil
	}
	var firstErr error
	must := func(name string, shape ...int) rawTensor {
		t, err := get(name, shape...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return t
	}
	b := &bert{cfg: cfg, k: k, workers: workers}
	// The word table stays int8 when stored so: only the rows of the tokens
	// seen are dequantized, which keeps load time and memory down.
	if t := must("embeddings.word_embeddings.weight", cfg.Vocab, H); t.q != nil {
		b.wordQ = t
	} else {
		b.word = t.data
	}
	b.pos = must("embeddings.position_embeddings.weight", cfg.MaxPos, H).float32s()
	if t := must("embeddings.token_type_embeddings.weight", cfg.TypeVocab, H); firstErr == nil {
		b.typ = t.float32s()[:H]
	}
	b.embLN = layerNormW{must("embeddings.LayerNorm.weight", H).float32s(), must("embeddings.LayerNorm.bias", H).float32s()}
	if firstErr != nil {
		return nil, firstErr
	}
	// The Linear layers are laid out in parallel: the int8 ones are a
	// transpose of every weight byte, a good part of the load time.
	type packJob struct {
		dst        **linear
		w          []rawTensor // stacked by rows (query, key, value fused)
		bias       []rawTensor
		geluInput  bool
		packed     *linear
		packingErr error
	}
	var jobs []*packJob
	b.layers = make([]bertLayer, cfg.Layers)
	for l := range b.layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		ly := &b.layers[l]
		qkv := &packJob{dst: &ly.qkv, bias: []rawTensor{must(p+"attention.self.query.bias", H), must(p+"attention.self.key.bias", H), must(p+"attention.self.value.bias", H)}}
		if _, fused := ts[p+quant.QKV]; fused {
			qkv.w = []rawTensor{must(p+quant.QKV, 3*H, H)}
		} else {
			qkv.w = []rawTensor{must(p+"attention.self.query.weight", H, H), must(p+"attention.self.key.weight", H, H), must(p+"attention.self.value.weight", H, H)}
		}
		jobs = append(jobs, qkv,
			&packJob{dst: &ly.attnOut, w: []rawTensor{must(p+"attention.output.dense.weight", H, H)}, bias: []rawTensor{must(p+"attention.output.dense.bias", H)}},
			&packJob{dst: &ly.inter, w: []rawTensor{must(p+"intermediate.dense.weight", cfg.Intermediate, H)}, bias: []rawTensor{must(p+"intermediate.dense.bias", cfg.Intermediate)}},
			&packJob{dst: &ly.out, geluInput: true, w: []rawTensor{must(p+"output.dense.weight", H, cfg.Intermediate)}, bias: []rawTensor{must(p+"output.dense.bias", H)}})
		ly.ln1 = layerNormW{must(p+"attention.output.LayerNorm.weight", H).float32s(), must(p+"attention.output.LayerNorm.bias", H).float32s()}
		ly.ln2 = layerNormW{must(p+"output.LayerNorm.weight", H).float32s(), must(p+"output.LayerNorm.bias", H).float32s()}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	if b.workers <= 0 {
		b.workers = runtime.GOMAXPROCS(0)
	}
	parallelFor(b.workers, len(jobs), func(i int) {
		j := jobs[i]
		w, bias := j.w[0], j.bias[0]
		if len(j.w) > 1 {
			w = fuseRows(j.w...)
		}
		if len(j.bias) > 1 {
			bias = fuseRows(j.bias...)
		}
		j.packed, j.packingErr = packLinear(w, bias, k.nr, j.geluInput)
	})
	for _, j := range jobs {
		if j.packingErr != nil {
			return nil, j.packingErr
		}
		*j.dst = j.packed
	}
	return b, nil
}

// parallelFor runs fn(i) for i in [0,n) on up to workers goroutines. It
// returns when every fn has returned, without waiting for helpers that
// started too late to find work: at batch 1 the caller often runs every
// task itself before a helper is scheduled, and waiting for that helper
// to be scheduled cost more than the tasks.
func parallelFor(workers, n int, fn func(i int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var pending sync.WaitGroup
	pending.Add(n)
	run := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			fn(i)
			pending.Done()
		}
	}
	for w := 1; w < workers; w++ {
		go run()
	}
	run()
	pending.Wait()
}

// matmul computes y[r] = x[r] W^T + bias for rows r in [0,rows) (rows a
// multiple of the kernel's mr); x has row stride l.in, y row stride l.out.
func (b *bert) matmul(x []float32, rows int, l *linear, y []float32) {
	b.matmulAfter(x, rows, l, y, 0, nil)
}

// matmulAfter is matmul after before(r) has run on each row r < n of x
// (before may be nil): for an int8 layer, in the pass that quantizes the
// rows.
func (b *bert) matmulAfter(x []float32, rows int, l *linear, y []float32, n int, before func(r int)) {
	if l.i8 != nil {
		b.matmulI8(x, rows, l, y, n, before)
		return
	}
	if before != nil {
		b.rowwise(n, before)
	}
	nr, mr := b.k.nr, b.k.mr
	const rowBlock = 64
	rowBlocks := (rows + rowBlock - 1) / rowBlock
	tasks := l.panels * rowBlocks
	parallelFor(b.workers, tasks, func(t int) {
		p, rb := t%l.panels, t/l.panels
		var panel []float32
		if l.q != nil {
			sp, _ := b.panelPool.Get().(*[]float32)
			if sp == nil || cap(*sp) < l.in*nr {
				s := make([]float32, l.in*nr)
				sp = &s
			}
			defer b.panelPool.Put(sp)
			panel = l.panel(b.k, p, *sp)
		} else {
			panel = l.panel(b.k, p, nil)
		}
		col := p * nr
		width := min(nr, l.out-col)
		var scratch [8 * 32]float32
		r1 := min(rows, (rb+1)*rowBlock)
		for r := rb * rowBlock; r < r1; r += mr {
			a := x[r*l.in:]
			bias := l.bias[col : col+nr]
			if width == nr {
				b.k.gemm(a, l.in, panel, l.in, bias, y[r*l.out+col:], l.out)
			} else {
				b.k.gemm(a, l.in, panel, l.in, bias, scratch[:], nr)
				for i := 0; i < mr; i++ {
					copy(y[(r+i)*l.out+col:(r+i)*l.out+col+width], scratch[i*nr:i*nr+width])
				}
			}
		}
	})
}

// layerNorm normalizes x in place: mean and variance in float64, each
// summed in four interleaved partial sums (a single running sum is one
// long chain of dependent additions, which left the unit idle most of the
// time), then scaled and shifted in float32.
func layerNorm(x []float32, w layerNormW, eps float64) {
	n := len(x)
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += float64(x[i])
		s1 += float64(x[i+1])
		s2 += float64(x[i+2])
		s3 += float64(x[i+3])
	}
	for ; i < n; i++ {
		s0 += float64(x[i])
	}
	mean := ((s0 + s1) + (s2 + s3)) / float64(n)
	s0, s1, s2, s3 = 0, 0, 0, 0
	for i = 0; i+4 <= n; i += 4 {
		d0, d1, d2, d3 := float64(x[i])-mean, float64(x[i+1])-mean, float64(x[i+2])-mean, float64(x[i+3])-mean
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < n; i++ {
		d := float64(x[i]) - mean
		s0 += d * d
	}
	inv := 1 / math.Sqrt(((s0+s1)+(s2+s3))/float64(n)+eps)
	g, b := w.g[:n], w.b[:n]
	for i, v := range x {
		x[i] = float32((float64(v)-mean)*inv)*g[i] + b[i]
	}
}

type bertBufs struct {
	x, qkv, ctx, tmp, inter []float32
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// encode runs the encoder over seqs (token ids, each within the position
// table) packed into one matrix without padding and returns one pooled
// (not normalized) vector per sequence.
func (b *bert) encode(ctx context.Context, seqs [][]int32, pool Pooling) ([][]float32, error) {
	H, I := b.cfg.Hidden, b.cfg.Intermediate
	nh := b.cfg.Heads
	dh := H / nh
	offs := make([]int, len(seqs)+1)
	for i, s := range seqs {
		if len(s) > b.cfg.MaxPos {
			return nil, fmt.Errorf("embed: sequence of %d tokens exceeds %d positions", len(s), b.cfg.MaxPos)
		}
		offs[i+1] = offs[i] + len(s)
	}
	T := offs[len(seqs)]
	mr := b.k.mr
	Tp := (T + mr - 1) / mr * mr
	bufs, _ := b.bufPool.Get().(*bertBufs)
	if bufs == nil {
		bufs = &bertBufs{}
	}
	defer b.bufPool.Put(bufs)
	x := grow(bufs.x, Tp*H)
	qkv := grow(bufs.qkv, Tp*3*H)
	cx := grow(bufs.ctx, Tp*H)
	tmp := grow(bufs.tmp, Tp*H)
	inter := grow(bufs.inter, Tp*I)
	bufs.x, bufs.qkv, bufs.ctx, bufs.tmp, bufs.inter = x, qkv, cx, tmp, inter
	clear(x[T*H:])

	for si, s := range seqs {
		for j, id := range s {
			if id < 0 || int(id) >= b.cfg.Vocab {
				return nil, fmt.Errorf("embed: token id %d outside the vocabulary", id)
			}
			row := x[(offs[si]+j)*H : (offs[si]+j+1)*H]
			w, p := row, b.pos[j*H:(j+1)*H]
			if b.wordQ.q != nil {
				b.wordQ.row(int(id), row)
			} else {
				w = b.word[int(id)*H : int(id+1)*H]
			}
			for d := range row {
				row[d] = w[d] + p[d] + b.typ[d]
			}
			layerNorm(row, b.embLN, b.cfg.Eps)
		}
	}
	scale := float32(1 / math.Sqrt(float64(dh)))
	nt := len(seqs) * nh
	// Each row step (residual and LayerNorm, GELU) runs in the pass over
	// the rows that quantizes them for the next layer: one hand-off to the
	// workers instead of two, which at batch 1 cost as much as the step.
	var pending func(r int) // the previous layer's last step
	for _, ly := range b.layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.matmulAfter(x, Tp, ly.qkv, qkv, T, pending)
		parallelFor(b.workers, nt, func(t int) {
			b.attention(qkv, cx, offs[t/nh], offs[t/nh+1]-offs[t/nh], t%nh, scale)
		})
		b.matmul(cx, Tp, ly.attnOut, tmp)
		b.matmulAfter(tmp, Tp, ly.inter, inter, T, func(r int) {
			row := tmp[r*H : (r+1)*H]
			res := x[r*H : (r+1)*H]
			for d := range row {
				row[d] += res[d]
			}
			layerNorm(row, ly.ln1, b.cfg.Eps)
		})
		b.matmulAfter(inter, Tp, ly.out, x, T, func(r int) { b.k.gelu(inter[r*I : (r+1)*I]) })
		pending = func(r int) {
			row := x[r*H : (r+1)*H]
			res := tmp[r*H : (r+1)*H]
			for d := range row {
				row[d] += res[d]
			}
			layerNorm(row, ly.ln2, b.cfg.Eps)
		}
	}
	if pending != nil {
		b.rowwise(T, pending)
	}
	out := make([][]float32, len(seqs))
	for si := range seqs {
		v := make([]float32, H)
		o, L := offs[si], offs[si+1]-offs[si]
		switch pool {
		case PoolCLS:
			copy(v, x[o*H:(o+1)*H])
		default:
			acc := make([]float64, H)
			for j := 0; j < L; j++ {
				for d, f := range x[(o+j)*H : (o+j+1)*H] {
					acc[d] += float64(f)
				}
			}
			for d := range v {
				v[d] = float32(acc[d] / float64(L))
			}
		}
		out[si] = v
	}
	return out, nil
}

// rowwise runs fn over rows [0,n) split in contiguous chunks across workers.
func (b *bert) rowwise(n int, fn func(r int)) {
	const chunk = 16
	parallelFor(b.workers, (n+chunk-1)/chunk, func(c int) {
		for r := c * chunk; r < min(n, (c+1)*chunk); r++ {
			fn(r)
		}
	})
}

type attnScratch struct{ q, kp, s, vp, o []float32 }

// attention computes head h of one sequence (rows [o, o+L) of the packed
// batch) with the gemm kernel: S = Q K^T * scale, softmax, O = S V.
func (b *bert) attention(qkv, cx []float32, o, L, h int, scale float32) {
	H := b.cfg.Hidden
	dh := H / b.cfg.Heads
	nr := b.k.nr
	mr := b.k.mr
	Lr := (L + mr - 1) / mr * mr // rows of Q and S, padded to the kernel's mr
	sp := (L + nr - 1) / nr      // panels of S's columns
	vpn := (dh + nr - 1) / nr    // panels of the output's columns
	ls := sp * nr                // row stride of S
	var zero [32]float32
	sc, _ := b.attnPool.Get().(*attnScratch)
	if sc == nil {
		sc = &attnScratch{}
	}
	defer b.attnPool.Put(sc)
	q := grow(sc.q, Lr*dh)
	kp := grow(sc.kp, sp*dh*nr)
	S := grow(sc.s, Lr*ls)
	vp := grow(sc.vp, vpn*L*nr)
	out := grow(sc.o, Lr*vpn*nr)
	sc.q, sc.kp, sc.s, sc.vp, sc.o = q, kp, S, vp, out
	clear(q[L*dh:])
	clear(kp)
	if vpn*nr != dh {
		clear(vp)
	}
	stride := 3 * H
	for i := 0; i < L; i++ {
		row := qkv[(o+i)*stride:]
		copy(q[i*dh:(i+1)*dh], row[h*dh:h*dh+dh])
		kr := row[H+h*dh : H+h*dh+dh]
		p, j := i/nr, i%nr
		for d, v := range kr {
			kp[p*dh*nr+d*nr+j] = v
		}
		vr := row[2*H+h*dh : 2*H+h*dh+dh]
		for d, v := range vr {
			vp[(d/nr)*L*nr+i*nr+d%nr] = v
		}
	}
	for r := 0; r < Lr; r += mr {
		for p := 0; p < sp; p++ {
			b.k.gemm(q[r*dh:], dh, kp[p*dh*nr:(p+1)*dh*nr], dh, zero[:nr], S[r*ls+p*nr:], ls)
		}
	}
	for i := 0; i < L; i++ {
		row := S[i*ls : i*ls+L]
		mx := float32(math.Inf(-1))
		for j := range row {
			row[j] *= scale
			mx = max(mx, row[j])
		}
		b.k.expShift(row, mx)
		var sum float32
		for _, e := range row {
			sum += e
		}
		inv := 1 / sum
		for j := range row {
			row[j] *= inv
		}
	}
	for i := L; i < Lr; i++ {
		clear(S[i*ls : i*ls+L]) // padding rows: keep the unused outputs finite
	}
	on := vpn * nr
	for r := 0; r < Lr; r += mr {
		for p := 0; p < vpn; p++ {
			b.k.gemm(S[r*ls:], ls, vp[p*L*nr:(p+1)*L*nr], L, zero[:nr], out[r*on+p*nr:], on)
		}
	}
	for i := 0; i < L; i++ {
		copy(cx[(o+i)*H+h*dh:(o+i)*H+h*dh+dh], out[i*on:i*on+dh])
	}
}
