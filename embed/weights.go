package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unsafe"

	"github.com/cairn-dev/cairn/embed/internal/quant"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawTensor is one tensor of a weight file, in the layout of Hugging Face's
// BertModel (Linear weights [out, in]): float32 data, or int8 values q with
// one float32 scale per group of consecutive values within a row (a whole row
// in format version 1), the value being float32(int8(q[i])) * scale[i/group].
type rawTensor struct {
	shape []int
	data  []float32
	q     []byte
	scale []float32
	group int // values per scale
	// panels, when set, is an int8 Linear weight already laid out for the
	// integer kernels (format version 3), group its activation group.
	panels *i8Panels
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// float32s returns the tensor's values, dequantizing an int8 tensor.
func (t rawTensor) float32s() []float32 {
	if t.q == nil {
		return t.data
	}
	out := make([]float32, len(t.q))
	g := t.group
	for k, s := range t.scale {
		dequantRow(out[k*g:(k+1)*g], t.q[k*g:], s)
	}
	return out
}

// row sets dst to row r of a 2-D tensor (dst has the row's length).
func (t rawTensor) row(r int, dst []float32) {
	n := len(dst)
	if t.q == nil {
		copy(dst, t.data[r*n:(r+1)*n])
		return
	}
	g := t.group
	for k := 0; k < n; k += g {
		dequantRow(dst[k:k+g], t.q[r*n+k:], t.scale[(r*n+k)/g])
	}
}

// dequantRow sets dst[i] = int8(q[i]) * scale.
func dequantRow(dst []float32, q []byte, scale float32) {
	q = q[:len(dst)]
	for i, v := range q {
		dst[i] = float32(int8(v)) * scale
	}
}

type safetensorsEntry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets []uint64 `json:"data_offsets"`
}

// parseSafetensors decodes a safetensors file: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the data.
// F32, F16 and BF16 tensors are read (converted to float32); I8 tensors with
// per-row or per-group scales (see embed/internal/quant) are kept as int8.
func parseSafetensors(b []byte) (map[string]rawTensor, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: safetensors: short file", ErrBadModel)
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) || hl > 100<<20 {
		return nil, fmt.Errorf("%w: safetensors: header length %d exceeds file", ErrBadModel, hl)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+hl], &header); err != nil {
		return nil, fmt.Errorf("%w: safetensors header: %v", ErrBadModel, err)
	}
	data := b[8+hl:]
	var meta map[string]string
	entries := make(map[string]safetensorsEntry, len(header))
	for name, raw := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(raw, &meta); err != nil {
				return nil, fmt.Errorf("%w: safetensors metadata: %v", ErrBadModel, err)
			}
			continue
		}
		var h safetensorsEntry
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("%w: safetensors tensor %q: %v", ErrBadModel, name, err)
		}
		if len(h.Offsets) != 2 || h.Offsets[0] > h.Offsets[1] || h.Offsets[1] > uint64(len(data)) {
			return nil, fmt.Errorf("%w: safetensors tensor %q: bad offsets %v", ErrBadModel, name, h.Offsets)
		}
		n := 1
		for _, d := range h.Shape {
			if d < 0 || (d > 0 && n > math.MaxInt32/d) {
				return nil, fmt.Errorf("%w: safetensors tensor %q: bad shape %v", ErrBadModel, name, h.Shape)
			}
			n *= d
		}
		size := map[string]int{"F32": 4, "F16": 2, "BF16": 2, "I8": 1}[h.Dtype]
		if size == 0 {
			continue // integer buffers such as position_ids are not weights
		}
		if uint64(n*size) != h.Offsets[1]-h.Offsets[0] {
			return nil, fmt.Errorf("%w: safetensors tensor %q: %d bytes for shape %v %s", ErrBadModel, name, h.Offsets[1]-h.Offsets[0], h.Shape, h.Dtype)
		}
		entries[name] = h
	}
	// A packed file (format version 3) is meant to be used where it lies:
	// its float32 tensors are read in place too.
	packed := meta[quant.VersionKey] == quant.V3 && meta[quant.Key] == quant.Int8PerGroup
	if packed && meta[quant.LayoutKey] != quant.Layout {
		return nil, fmt.Errorf("%w: safetensors %s %q (this build reads %q)", ErrUnsupported, quant.LayoutKey, meta[quant.LayoutKey], quant.Layout)
	}
	out := make(map[string]rawTensor, len(entries))
	for name, h := range entries {
		seg := data[h.Offsets[0]:h.Offsets[1]]
		if base, ok := strings.CutSuffix(name, quant.PanelsSuffix); ok && packed && h.Dtype == "I8" {
			t, err := panelTensor(name, h, entries[base+quant.PanelScalesSuffix], seg, data)
			if err != nil {
				return nil, err
			}
			out[base] = t
			continue
		}
		if base, ok := strings.CutSuffix(name, quant.PanelScalesSuffix); ok && packed && entries[base+quant.PanelsSuffix].Dtype == "I8" {
			continue // read with its tensor
		}
		if h.Dtype == "I8" {
			t, err := int8Tensor(name, h, seg, entries, data, meta)
			if err != nil {
				return nil, err
			}
			out[name] = t
			continue
		}
		if sc, ok := entries[strings.TrimSuffix(name, quant.ScaleSuffix)]; ok && sc.Dtype == "I8" && strings.HasSuffix(name, quant.ScaleSuffix) {
			continue // read with its tensor
		}
		if packed && h.Dtype == "F32" {
			out[name] = rawTensor{shape: h.Shape, data: float32s(seg)}
			continue
		}
		v := make([]float32, numel(h.Shape))
		for i := range v {
			switch h.Dtype {
			case "F32":
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(seg[4*i:]))
			case "BF16":
				v[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(seg[2*i:])) << 16)
			case "F16":
				v[i] = halfToFloat(binary.LittleEndian.Uint16(seg[2*i:]))
			}
		}
		out[name] = rawTensor{shape: h.Shape, data: v}
	}
	return out, nil
}

// int8Tensor reads I8 tensor name with its scales: shape [rows] in format
// version 1 (one per row), [rows, groups] in version 2 (groups dividing the
// row's length).
func int8Tensor(name string, h safetensorsEntry, seg []byte, entries map[string]safetensorsEntry, data []byte, meta map[string]string) (rawTensor, error) {
	scheme, version := meta[quant.Key], meta[quant.VersionKey]
	switch {
	case scheme == quant.Int8PerRow && version == quant.V1, scheme == quant.Int8PerGroup && (version == quant.V2 || version == quant.V3):
	case scheme != quant.Int8PerRow && scheme != quant.Int8PerGroup:
		return rawTensor{}, fmt.Errorf("%w: safetensors tensor %q is int8 but the file's %s is %q, want %q or %q", ErrUnsupported, name, quant.Key, scheme, quant.Int8PerRow, quant.Int8PerGroup)
	default:
		return rawTensor{}, fmt.Errorf("%w: safetensors %s %q with %s %q (this build reads %q with %q, %q with %q)", ErrUnsupported, quant.VersionKey, version, quant.Key, scheme,
			quant.V1, quant.Int8PerRow, quant.V2, quant.Int8PerGroup)
	}
	sh, ok := entries[name+quant.ScaleSuffix]
	groups := 1
	if ok && version != quant.V1 && len(sh.Shape) == 2 {
		groups = sh.Shape[1]
	}
	wantRank := 1
	if version != quant.V1 {
		wantRank = 2
	}
	if !ok || sh.Dtype != "F32" || len(h.Shape) == 0 || len(sh.Shape) != wantRank || sh.Shape[0] != h.Shape[0] || h.Shape[0] == 0 ||
		groups <= 0 || (numel(h.Shape)/h.Shape[0])%groups != 0 || numel(h.Shape) == 0 {
		return rawTensor{}, fmt.Errorf("%w: safetensors int8 tensor %q (shape %v) needs an F32 tensor %q of shape %s", ErrBadModel, name, h.Shape, name+quant.ScaleSuffix, scaleShape(version, h.Shape))
	}
	scale := float32s(data[sh.Offsets[0]:sh.Offsets[1]])
	if i := nonFinite(scale); i >= 0 {
		return rawTensor{}, fmt.Errorf("%w: safetensors tensor %q: scale %d is not finite", ErrBadModel, name+quant.ScaleSuffix, i)
	}
	return rawTensor{shape: h.Shape, q: seg, scale: scale, group: numel(h.Shape) / len(scale)}, nil
}

// panelTensor reads packed int8 Linear weight name (I8 [out, in] in
// quant's panel layout) with its panel scales sh, both used in place.
func panelTensor(name string, h, sh safetensorsEntry, seg, data []byte) (rawTensor, error) {
	bad := func() (rawTensor, error) {
		return rawTensor{}, fmt.Errorf("%w: safetensors packed tensor %q (shape %v) needs an F32 tensor %q of shape [out/%d, in/group, %d or %d] (group a multiple of 4), out a multiple of %d", ErrBadModel,
			name, h.Shape, strings.TrimSuffix(name, quant.PanelsSuffix)+quant.PanelScalesSuffix, i8nr, i8nr, 2*i8nr, i8nr)
	}
	if len(h.Shape) != 2 || sh.Dtype != "F32" || len(sh.Shape) != 3 || h.Shape[0] <= 0 || h.Shape[1] <= 0 || h.Shape[0]%i8nr != 0 ||
		sh.Shape[0] != h.Shape[0]/i8nr || sh.Shape[1] <= 0 || h.Shape[1]%sh.Shape[1] != 0 || (h.Shape[1]/sh.Shape[1])%4 != 0 ||
		(sh.Shape[2] != i8nr && sh.Shape[2] != 2*i8nr) {
		return bad()
	}
	scales := float32s(data[sh.Offsets[0]:sh.Offsets[1]])
	if i := nonFinite(scales); i >= 0 {
		return rawTensor{}, fmt.Errorf("%w: safetensors tensor %q: scale %d is not finite", ErrBadModel, strings.TrimSuffix(name, quant.PanelsSuffix)+quant.PanelScalesSuffix, i)
	}
	return rawTensor{shape: h.Shape, group: h.Shape[1] / sh.Shape[1],
		panels: &i8Panels{q: seg, scales: scales, unsigned: sh.Shape[2] == 2*i8nr}}, nil
}

// float32s returns little-endian float32 bytes as values: the bytes
// themselves when the machine is little-endian and they are aligned (they
// may be read-only memory: they are never written), else a decoded copy.
func float32s(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if nativeLittleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// nonFinite returns the index of the first NaN or infinite value, or -1.
func nonFinite(v []float32) int {
	for i, f := range v {
		if math.Float32bits(f)&0x7f800000 == 0x7f800000 {
			return i
		}
	}
	return -1
}

// scaleShape describes the scale tensor a format version expects.
func scaleShape(version string, shape []int) string {
	switch {
	case len(shape) == 0:
		return "[rows]"
	case version == quant.V2:
		return fmt.Sprintf("[%d, groups] (groups dividing %d)", shape[0], numel(shape)/max(shape[0], 1))
	}
	return fmt.Sprintf("[%d]", shape[0])
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(frac) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// matMulScope matches the node names torch.onnx gives a BERT Linear's MatMul.
var matMulScope = regexp.MustCompile(`^/(?:bert/)?encoder/layer\.(\d+)/(attention/self/query|attention/self/key|attention/self/value|attention/output/dense|intermediate/dense|output/dense)/MatMul$`)

// parseONNXWeights reads the float initializers of a standard Hugging Face
// BERT ONNX export. Named initializers keep their names; the anonymous
// MatMul weights ("onnx::MatMul_N", stored [in, out]) are named after the
// node that uses them (e.g. encoder.layer.3.intermediate.dense.weight) and
// transposed to [out, in].
func parseONNXWeights(b []byte) (map[string]rawTensor, error) {
	graph, err := protoField(b, 7)
	if err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, fmt.Errorf("%w: onnx: no graph", ErrBadModel)
	}
	inits := map[string]rawTensor{}
	matmul := map[string]string{} // initializer name -> weight name
	err = protoEach(graph, func(num protowire.Number, v []byte) error {
		switch num {
		case 5: // initializer
			name, t, ok, err := parseTensorProto(v)
			if err != nil {
				return err
			}
			if ok {
				inits[name] = t
			}
		case 1: // node
			var name, op string
			var inputs []string
			if err := protoEach(v, func(n protowire.Number, f []byte) error {
				switch n {
				case 1:
					inputs = append(inputs, string(f))
				case 3:
					name = string(f)
				case 4:
					op = string(f)
				}
				return nil
			}); err != nil {
				return err
			}
			if op == "MatMul" && len(inputs) == 2 {
				if m := matMulScope.FindStringSubmatch(name); m != nil {
					matmul[inputs[1]] = "encoder.layer." + m[1] + "." + strings.ReplaceAll(m[2], "/", ".") + ".weight"
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]rawTensor, len(inits))
	for name, t := range inits {
		if w, ok := matmul[name]; ok {
			if len(t.shape) != 2 {
				return nil, fmt.Errorf("%w: onnx: MatMul weight %q has shape %v", ErrBadModel, name, t.shape)
			}
			in, o := t.shape[0], t.shape[1]
			tr := make([]float32, len(t.data))
			for i := 0; i < in; i++ {
				for j := 0; j < o; j++ {
					tr[j*in+i] = t.data[i*o+j]
				}
			}
			out[w] = rawTensor{shape: []int{o, in}, data: tr}
			continue
		}
		out[strings.TrimPrefix(name, "bert.")] = t
	}
	return out, nil
}

// parseTensorProto decodes a float TensorProto (raw_data or float_data).
func parseTensorProto(b []byte) (name string, t rawTensor, ok bool, err error) {
	var dtype uint64
	var raw []byte
	var floats []float32
	var hasRaw bool
	err = protoEach(b, func(n protowire.Number, v []byte) error {
		switch n {
		case 1:
			for len(v) > 0 {
				d, k := protowire.ConsumeVarint(v)
				if k < 0 || d > math.MaxInt32 {
					return fmt.Errorf("%w: onnx: bad tensor dims", ErrBadModel)
				}
				t.shape = append(t.shape, int(d))
				v = v[k:]
			}
		case 2:
			d, k := protowire.ConsumeVarint(v)
			if k < 0 {
				return fmt.Errorf("%w: onnx: bad data_type", ErrBadModel)
			}
			dtype = d
		case 4:
			for len(v) >= 4 {
				floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(v)))
				v = v[4:]
			}
		case 8:
			name = string(v)
		case 9:
			raw, hasRaw = v, true
		case 14:
			return fmt.Errorf("%w: onnx: external tensor data is not supported", ErrUnsupported)
		}
		return nil
	})
	if err != nil || dtype != 1 {
		return name, t, false, err
	}
	n := 1
	for _, d := range t.shape {
		if d > 0 && n > math.MaxInt32/d {
			return name, t, false, fmt.Errorf("%w: onnx: tensor %q too large", ErrBadModel, name)
		}
		n *= d
	}
	if hasRaw {
		if len(raw) != 4*n {
			return name, t, false, fmt.Errorf("%w: onnx: tensor %q has %d bytes for %d floats", ErrBadModel, name, len(raw), n)
		}
		t.data = make([]float32, n)
		for i := range t.data {
			t.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	} else {
		if len(floats) != n {
			return name, t, false, fmt.Errorf("%w: onnx: tensor %q has %d floats for %d", ErrBadModel, name, len(floats), n)
		}
		t.data = floats
	}
	return name, t, true, nil
}

// protoEach calls fn for every length-delimited field of message b (varint
// fields are passed encoded as a varint, other wire types are skipped).
func protoEach(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: onnx: bad protobuf tag", ErrBadModel)
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return fmt.Errorf("%w: onnx: truncated field %d", ErrBadModel, num)
			}
			if err := fn(num, v); err != nil {
				return err
			}
			b = b[m:]
		case protowire.VarintType:
			_, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return fmt.Errorf("%w: onnx: truncated varint %d", ErrBadModel, num)
			}
			if err := fn(num, b[:m]); err != nil {
				return err
			}
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return fmt.Errorf("%w: onnx: truncated field %d", ErrBadModel, num)
			}
			b = b[m:]
		}
	}
	return nil
}

// protoField returns the last length-delimited field num of message b.
func protoField(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	err := protoEach(b, func(n protowire.Number, v []byte) error {
		if n == num {
			out = v
		}
		return nil
	})
	return out, err
}

// fuseRows stacks tensors along their first dimension (the fused
// query/key/value projection and its bias); the other dimensions must
// agree. It stays int8 when all are int8 with the same group; otherwise
// the values are dequantized.
func fuseRows(ts ...rawTensor) rawTensor {
	rows, n := 0, 0
	int8Same := true
	for _, t := range ts {
		rows += t.shape[0]
		n += numel(t.shape)
		int8Same = int8Same && t.q != nil && t.group == ts[0].group
	}
	shape := append([]int{rows}, ts[0].shape[1:]...)
	if int8Same {
		f := rawTensor{shape: shape, group: ts[0].group, q: make([]byte, 0, n), scale: make([]float32, 0, n/ts[0].group)}
		for _, t := range ts {
			f.q = append(f.q, t.q[:numel(t.shape)]...)
			f.scale = append(f.scale, t.scale...)
		}
		return f
	}
	f := rawTensor{shape: shape, data: make([]float32, 0, n)}
	for _, t := range ts {
		f.data = append(f.data, t.float32s()...)
	}
	return f
}
