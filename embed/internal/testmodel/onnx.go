package testmodel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX protobuf field numbers (onnx.proto).
const (
	tFloat = 1
	tInt64 = 7
)

type graphBuilder struct {
	nodes, inits [][]byte
	n            int
	matmul       int
}

func (g *graphBuilder) tmp(prefix string) string {
	g.n++
	return fmt.Sprintf("%s_%d", prefix, g.n)
}

type attr struct {
	name string
	i    *int64
	f    *float32
	ints []int64
}

func attrInt(name string, v int64) attr     { return attr{name: name, i: &v} }
func attrInts(name string, v ...int64) attr { return attr{name: name, ints: v} }

func (g *graphBuilder) node(name, op string, in []string, out []string, attrs ...attr) {
	var b []byte
	for _, s := range in {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	for _, s := range out {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, op)
	for _, a := range attrs {
		var ab []byte
		ab = protowire.AppendTag(ab, 1, protowire.BytesType)
		ab = protowire.AppendString(ab, a.name)
		switch {
		case a.i != nil:
			ab = protowire.AppendTag(ab, 3, protowire.VarintType)
			ab = protowire.AppendVarint(ab, uint64(*a.i))
			ab = protowire.AppendTag(ab, 20, protowire.VarintType)
			ab = protowire.AppendVarint(ab, 2)
		case a.f != nil:
			ab = protowire.AppendTag(ab, 2, protowire.Fixed32Type)
			ab = protowire.AppendFixed32(ab, math.Float32bits(*a.f))
			ab = protowire.AppendTag(ab, 20, protowire.VarintType)
			ab = protowire.AppendVarint(ab, 1)
		default:
			var packed []byte
			for _, v := range a.ints {
				packed = protowire.AppendVarint(packed, uint64(v))
			}
			ab = protowire.AppendTag(ab, 8, protowire.BytesType)
			ab = protowire.AppendBytes(ab, packed)
			ab = protowire.AppendTag(ab, 20, protowire.VarintType)
			ab = protowire.AppendVarint(ab, 7)
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, ab)
	}
	g.nodes = append(g.nodes, b)
}

func tensorProto(name string, dtype int, dims []int, raw []byte) []byte {
	var b []byte
	if len(dims) > 0 {
		var packed []byte
		for _, d := range dims {
			packed = protowire.AppendVarint(packed, uint64(d))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(dtype))
	b = protowire.AppendTag(b, 8, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	return b
}

func (g *graphBuilder) initF32(name string, dims []int, data []float32) {
	raw := make([]byte, 0, 4*len(data))
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	g.inits = append(g.inits, tensorProto(name, tFloat, dims, raw))
}

func (g *graphBuilder) initI64(name string, dims []int, data []int64) {
	raw := make([]byte, 0, 8*len(data))
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
	}
	g.inits = append(g.inits, tensorProto(name, tInt64, dims, raw))
}

// constF32 adds a scalar float initializer and returns its name.
func (g *graphBuilder) constF32(v float32) string {
	name := g.tmp("const_f")
	g.initF32(name, nil, []float32{v})
	return name
}

func (g *graphBuilder) constI64(v ...int64) string {
	name := g.tmp("const_i")
	g.initI64(name, []int{len(v)}, v)
	return name
}

func valueInfo(name string, elem int, dims []any) []byte {
	var shape []byte
	for _, d := range dims {
		var db []byte
		switch d := d.(type) {
		case int:
			db = protowire.AppendTag(db, 1, protowire.VarintType)
			db = protowire.AppendVarint(db, uint64(d))
		case string:
			db = protowire.AppendTag(db, 2, protowire.BytesType)
			db = protowire.AppendString(db, d)
		}
		shape = protowire.AppendTag(shape, 1, protowire.BytesType)
		shape = protowire.AppendBytes(shape, db)
	}
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(elem))
	tt = protowire.AppendTag(tt, 2, protowire.BytesType)
	tt = protowire.AppendBytes(tt, shape)
	var typ []byte
	typ = protowire.AppendTag(typ, 1, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tt)
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, typ)
	return b
}

// layerNorm emits the decomposed LayerNorm of a torch.onnx opset-14 export.
func (g *graphBuilder) layerNorm(scope, x, gamma, beta string) string {
	mean, d, sq, v, ve, sd, norm, mul, out := scope+"/ReduceMean_output_0", scope+"/Sub_output_0",
		scope+"/Pow_output_0", scope+"/ReduceMean_1_output_0", scope+"/Add_output_0",
		scope+"/Sqrt_output_0", scope+"/Div_output_0", scope+"/Mul_output_0", scope+"/Add_1_output_0"
	g.node(scope+"/ReduceMean", "ReduceMean", []string{x}, []string{mean}, attrInts("axes", -1), attrInt("keepdims", 1))
	g.node(scope+"/Sub", "Sub", []string{x, mean}, []string{d})
	g.node(scope+"/Pow", "Pow", []string{d, g.constF32(2)}, []string{sq})
	g.node(scope+"/ReduceMean_1", "ReduceMean", []string{sq}, []string{v}, attrInts("axes", -1), attrInt("keepdims", 1))
	g.node(scope+"/Add", "Add", []string{v, g.constF32(1e-12)}, []string{ve})
	g.node(scope+"/Sqrt", "Sqrt", []string{ve}, []string{sd})
	g.node(scope+"/Div", "Div", []string{d, sd}, []string{norm})
	g.node(scope+"/Mul", "Mul", []string{norm, gamma}, []string{mul})
	g.node(scope+"/Add_1", "Add", []string{mul, beta}, []string{out})
	return out
}

// linear emits MatMul with a transposed, anonymously named weight
// ("onnx::MatMul_N", as torch.onnx names them) followed by the bias Add.
func (g *graphBuilder) linear(scope, x string, w tensor, bias string) string {
	out, in := w.shape[0], w.shape[1]
	wt := make([]float32, len(w.data))
	for o := 0; o < out; o++ {
		for i := 0; i < in; i++ {
			wt[i*out+o] = w.data[o*in+i]
		}
	}
	g.matmul++
	wname := fmt.Sprintf("onnx::MatMul_%d", 1000+g.matmul)
	g.initF32(wname, []int{in, out}, wt)
	mm, add := scope+"/MatMul_output_0", scope+"/Add_output_0"
	g.node(scope+"/MatMul", "MatMul", []string{x, wname}, []string{mm})
	g.node(scope+"/Add", "Add", []string{bias, mm}, []string{add})
	return add
}

// onnx encodes the model of weights ts as the graph of a standard Hugging
// Face BERT export (torch.onnx, opset 14).
//
// It is long because it lays out that graph node by node, in the order an
// exported file holds them.
func (s Spec) onnx(ts []tensor) []byte {
	byName := map[string]tensor{}
	g := &graphBuilder{}
	for _, t := range ts {
		byName[t.name] = t
		if strings.HasPrefix(t.name, "pooler.") || (strings.HasSuffix(t.name, ".weight") && len(t.shape) == 2 && strings.Contains(t.name, "encoder.")) {
			continue // MatMul weights are added transposed by linear; the pooler is not exported
		}
		g.initF32(t.name, t.shape, t.data)
	}
	H, nh := s.Hidden, s.Heads
	dh := H / nh
	pos := make([]int64, s.MaxPos)
	for i := range pos {
		pos[i] = int64(i)
	}
	g.initI64("embeddings.position_ids", []int{1, s.MaxPos}, pos)

	// Embeddings.
	g.node("/embeddings/word_embeddings/Gather", "Gather", []string{"embeddings.word_embeddings.weight", "input_ids"}, []string{"/embeddings/word_embeddings/Gather_output_0"})
	g.node("/embeddings/token_type_embeddings/Gather", "Gather", []string{"embeddings.token_type_embeddings.weight", "token_type_ids"}, []string{"/embeddings/token_type_embeddings/Gather_output_0"})
	g.node("/embeddings/Add", "Add", []string{"/embeddings/word_embeddings/Gather_output_0", "/embeddings/token_type_embeddings/Gather_output_0"}, []string{"/embeddings/Add_output_0"})
	g.node("/embeddings/Shape", "Shape", []string{"input_ids"}, []string{"/embeddings/Shape_output_0"})
	g.node("/embeddings/Slice", "Slice", []string{"/embeddings/Shape_output_0", g.constI64(1), g.constI64(2), g.constI64(0)}, []string{"/embeddings/Slice_output_0"})
	g.node("/embeddings/Slice_1", "Slice", []string{"embeddings.position_ids", g.constI64(0), "/embeddings/Slice_output_0", g.constI64(1)}, []string{"/embeddings/Slice_1_output_0"})
	g.node("/embeddings/position_embeddings/Gather", "Gather", []string{"embeddings.position_embeddings.weight", "/embeddings/Slice_1_output_0"}, []string{"/embeddings/position_embeddings/Gather_output_0"})
	g.node("/embeddings/Add_1", "Add", []string{"/embeddings/Add_output_0", "/embeddings/position_embeddings/Gather_output_0"}, []string{"/embeddings/Add_1_output_0"})
	x := g.layerNorm("/embeddings/LayerNorm", "/embeddings/Add_1_output_0", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias")

	// Extended attention mask: (1 - mask[:, None, None, :]) * -10000.
	g.node("/Unsqueeze", "Unsqueeze", []string{"attention_mask", g.constI64(1, 2)}, []string{"/Unsqueeze_output_0"})
	g.node("/Cast", "Cast", []string{"/Unsqueeze_output_0"}, []string{"/Cast_output_0"}, attrInt("to", tFloat))
	g.node("/Sub", "Sub", []string{g.constF32(1), "/Cast_output_0"}, []string{"/Sub_output_0"})
	g.node("/Mul", "Mul", []string{"/Sub_output_0", g.constF32(-10000)}, []string{"/Mul_output_0"})
	mask := "/Mul_output_0"

	heads := g.constI64(0, 0, int64(nh), int64(dh))
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		sc := fmt.Sprintf("/encoder/layer.%d", l)
		split := func(m string, perm ...int64) string {
			y := g.linear(sc+"/attention/self/"+m, x, byName[p+"attention.self."+m+".weight"], p+"attention.self."+m+".bias")
			r, tr := sc+"/attention/self/"+m+"/Reshape_output_0", sc+"/attention/self/"+m+"/Transpose_output_0"
			g.node(sc+"/attention/self/"+m+"/Reshape", "Reshape", []string{y, heads}, []string{r})
			g.node(sc+"/attention/self/"+m+"/Transpose", "Transpose", []string{r}, []string{tr}, attrInts("perm", perm...))
			return tr
		}
		q := split("query", 0, 2, 1, 3)
		k := split("key", 0, 2, 3, 1)
		v := split("value", 0, 2, 1, 3)
		a := sc + "/attention/self"
		g.node(a+"/MatMul", "MatMul", []string{q, k}, []string{a + "/MatMul_output_0"})
		g.node(a+"/Div", "Div", []string{a + "/MatMul_output_0", g.constF32(float32(math.Sqrt(float64(dh))))}, []string{a + "/Div_output_0"})
		g.node(a+"/Add", "Add", []string{a + "/Div_output_0", mask}, []string{a + "/Add_output_0"})
		g.node(a+"/Softmax", "Softmax", []string{a + "/Add_output_0"}, []string{a + "/Softmax_output_0"}, attrInt("axis", -1))
		g.node(a+"/MatMul_1", "MatMul", []string{a + "/Softmax_output_0", v}, []string{a + "/MatMul_1_output_0"})
		g.node(a+"/Transpose", "Transpose", []string{a + "/MatMul_1_output_0"}, []string{a + "/Transpose_output_0"}, attrInts("perm", 0, 2, 1, 3))
		g.node(a+"/Reshape", "Reshape", []string{a + "/Transpose_output_0", g.constI64(0, 0, int64(H))}, []string{a + "/Reshape_output_0"})
		o := g.linear(sc+"/attention/output/dense", a+"/Reshape_output_0", byName[p+"attention.output.dense.weight"], p+"attention.output.dense.bias")
		g.node(sc+"/attention/output/Add", "Add", []string{o, x}, []string{sc + "/attention/output/Add_output_0"})
		x1 := g.layerNorm(sc+"/attention/output/LayerNorm", sc+"/attention/output/Add_output_0", p+"attention.output.LayerNorm.weight", p+"attention.output.LayerNorm.bias")
		h := g.linear(sc+"/intermediate/dense", x1, byName[p+"intermediate.dense.weight"], p+"intermediate.dense.bias")
		ia := sc + "/intermediate/intermediate_act_fn"
		g.node(ia+"/Div", "Div", []string{h, g.constF32(float32(math.Sqrt2))}, []string{ia + "/Div_output_0"})
		g.node(ia+"/Erf", "Erf", []string{ia + "/Div_output_0"}, []string{ia + "/Erf_output_0"})
		g.node(ia+"/Add", "Add", []string{ia + "/Erf_output_0", g.constF32(1)}, []string{ia + "/Add_output_0"})
		g.node(ia+"/Mul", "Mul", []string{h, ia + "/Add_output_0"}, []string{ia + "/Mul_output_0"})
		g.node(ia+"/Mul_1", "Mul", []string{ia + "/Mul_output_0", g.constF32(0.5)}, []string{ia + "/Mul_1_output_0"})
		o2 := g.linear(sc+"/output/dense", ia+"/Mul_1_output_0", byName[p+"output.dense.weight"], p+"output.dense.bias")
		g.node(sc+"/output/Add", "Add", []string{o2, x1}, []string{sc + "/output/Add_output_0"})
		x = g.layerNorm(sc+"/output/LayerNorm", sc+"/output/Add_output_0", p+"output.LayerNorm.weight", p+"output.LayerNorm.bias")
	}
	g.node("/Identity", "Identity", []string{x}, []string{"last_hidden_state"})

	var graph []byte
	for _, n := range g.nodes {
		graph = protowire.AppendTag(graph, 1, protowire.BytesType)
		graph = protowire.AppendBytes(graph, n)
	}
	graph = protowire.AppendTag(graph, 2, protowire.BytesType)
	graph = protowire.AppendString(graph, "main_graph")
	for _, t := range g.inits {
		graph = protowire.AppendTag(graph, 5, protowire.BytesType)
		graph = protowire.AppendBytes(graph, t)
	}
	for _, in := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		graph = protowire.AppendTag(graph, 11, protowire.BytesType)
		graph = protowire.AppendBytes(graph, valueInfo(in, tInt64, []any{"batch_size", "sequence_length"}))
	}
	graph = protowire.AppendTag(graph, 12, protowire.BytesType)
	graph = protowire.AppendBytes(graph, valueInfo("last_hidden_state", tFloat, []any{"batch_size", "sequence_length", H}))

	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, 8) // ir_version
	m = protowire.AppendTag(m, 2, protowire.BytesType)
	m = protowire.AppendString(m, "cairn-testmodel")
	var opset []byte
	opset = protowire.AppendTag(opset, 1, protowire.BytesType)
	opset = protowire.AppendString(opset, "")
	opset = protowire.AppendTag(opset, 2, protowire.VarintType)
	opset = protowire.AppendVarint(opset, 14)
	m = protowire.AppendTag(m, 8, protowire.BytesType)
	m = protowire.AppendBytes(m, opset)
	m = protowire.AppendTag(m, 7, protowire.BytesType)
	m = protowire.AppendBytes(m, graph)
	return m
}
