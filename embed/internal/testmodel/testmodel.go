// Package testmodel writes BERT-family sentence-transformers model
// directories with seeded random weights, for embed's tests and benchmarks:
// config.json, tokenizer.json (copied from a real one), model.safetensors,
// model.onnx (the graph of a standard Hugging Face BERT export, decomposed
// LayerNorm, opset 14), modules.json and 1_Pooling/config.json.
//
// The weights are a pure function of the Spec (PCG seeded with Spec.Seed), so
// the ~90 MB MiniLM-shaped model never needs to be committed. Random weights
// say nothing about semantic quality; they exercise shapes, numerics and speed.
package testmodel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
)

// Spec describes a BERT encoder to generate.
type Spec struct {
	Name         string
	Layers       int
	Hidden       int
	Heads        int
	Intermediate int
	Vocab        int
	MaxPos       int
	Seed         uint64
	Pooling      string // "mean" or "cls"
	MaxSeqLength int
	Prompts      map[string]string // config_sentence_transformers.json prompts
	ONNX         bool
}

// Tiny is a 2-layer, hidden-32 BERT with the real 30522-token vocabulary.
func Tiny() Spec {
	return Spec{Name: "cairn-tiny-bert", Layers: 2, Hidden: 32, Heads: 4, Intermediate: 64,
		Vocab: 30522, MaxPos: 512, Seed: 1, Pooling: "mean", MaxSeqLength: 256, ONNX: true}
}

// TinyCLS is Tiny with CLS pooling and e5-style prompts.
func TinyCLS() Spec {
	s := Tiny()
	s.Name, s.Seed, s.Pooling = "cairn-tiny-bert-cls", 2, "cls"
	s.Prompts = map[string]string{"query": "query: ", "document": "passage: "}
	return s
}

// MiniLM is shaped like all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads,
// intermediate 1536, vocabulary 30522.
func MiniLM() Spec {
	return Spec{Name: "cairn-minilm-shaped", Layers: 6, Hidden: 384, Heads: 12, Intermediate: 1536,
		Vocab: 30522, MaxPos: 512, Seed: 6, Pooling: "mean", MaxSeqLength: 256, ONNX: true}
}

type tensor struct {
	name  string
	shape []int
	data  []float32
}

// Weights returns the model's tensors in Hugging Face BertModel naming
// (Linear weights are [out, in]).
func (s Spec) Weights() []tensor {
	rng := rand.New(rand.NewPCG(s.Seed, 0x6361697262657274))
	normal := func(n int, std, mean float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + std*rng.NormFloat64())
		}
		return v
	}
	H, I := s.Hidden, s.Intermediate
	var ts []tensor
	add := func(name string, shape []int, std, mean float64) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		ts = append(ts, tensor{name, shape, normal(n, std, mean)})
	}
	add("embeddings.word_embeddings.weight", []int{s.Vocab, H}, 0.5, 0)
	add("embeddings.position_embeddings.weight", []int{s.MaxPos, H}, 0.2, 0)
	add("embeddings.token_type_embeddings.weight", []int{2, H}, 0.2, 0)
	add("embeddings.LayerNorm.weight", []int{H}, 0.1, 1)
	add("embeddings.LayerNorm.bias", []int{H}, 0.1, 0)
	std := 1 / math.Sqrt(float64(H))
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, m := range []string{"query", "key", "value"} {
			add(p+"attention.self."+m+".weight", []int{H, H}, std, 0)
			add(p+"attention.self."+m+".bias", []int{H}, 0.05, 0)
		}
		add(p+"attention.output.dense.weight", []int{H, H}, std, 0)
		add(p+"attention.output.dense.bias", []int{H}, 0.05, 0)
		add(p+"attention.output.LayerNorm.weight", []int{H}, 0.1, 1)
		add(p+"attention.output.LayerNorm.bias", []int{H}, 0.1, 0)
		add(p+"intermediate.dense.weight", []int{I, H}, std, 0)
		add(p+"intermediate.dense.bias", []int{I}, 0.05, 0)
		add(p+"output.dense.weight", []int{H, I}, 1/math.Sqrt(float64(I)), 0)
		add(p+"output.dense.bias", []int{H}, 0.05, 0)
		add(p+"output.LayerNorm.weight", []int{H}, 0.1, 1)
		add(p+"output.LayerNorm.bias", []int{H}, 0.1, 0)
	}
	add("pooler.dense.weight", []int{H, H}, std, 0)
	add("pooler.dense.bias", []int{H}, 0.05, 0)
	return ts
}

// Write writes the model directory dir (created if missing), copying the
// tokenizer.json at tokenizerPath.
func (s Spec) Write(dir, tokenizerPath string) error {
	if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
		return err
	}
	tok, err := os.ReadFile(tokenizerPath)
	if err != nil {
		return err
	}
	ts := s.Weights()
	files := map[string][]byte{
		"tokenizer.json": tok,
		"config.json": mustJSON(map[string]any{
			"_name_or_path": s.Name, "architectures": []string{"BertModel"}, "model_type": "bert",
			"hidden_size": s.Hidden, "num_hidden_layers": s.Layers, "num_attention_heads": s.Heads,
			"intermediate_size": s.Intermediate, "vocab_size": s.Vocab, "max_position_embeddings": s.MaxPos,
			"type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12, "pad_token_id": 0,
			"position_embedding_type": "absolute", "torch_dtype": "float32",
		}),
		"modules.json": mustJSON([]map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
			{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
		}),
		"1_Pooling/config.json": mustJSON(map[string]any{
			"word_embedding_dimension": s.Hidden, "pooling_mode_cls_token": s.Pooling == "cls",
			"pooling_mode_mean_tokens": s.Pooling == "mean", "pooling_mode_max_tokens": false,
			"pooling_mode_mean_sqrt_len_tokens": false,
		}),
		"sentence_bert_config.json": mustJSON(map[string]any{"max_seq_length": s.MaxSeqLength, "do_lower_case": false}),
		"model.safetensors":         safetensors(ts),
	}
	if s.Prompts != nil {
		files["config_sentence_transformers.json"] = mustJSON(map[string]any{"prompts": s.Prompts, "default_prompt_name": nil})
	}
	if s.ONNX {
		files["model.onnx"] = s.onnx(ts)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// safetensors encodes ts: u64 little-endian header length, JSON header, data.
func safetensors(ts []tensor) []byte {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, t := range ts {
		n := len(t.data) * 4
		header[t.name] = map[string]any{"dtype": "F32", "shape": t.shape, "data_offsets": []int{off, off + n}}
		off += n
	}
	h, _ := json.Marshal(header)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := make([]byte, 8, 8+len(h)+off)
	binary.LittleEndian.PutUint64(out, uint64(len(h)))
	out = append(out, h...)
	for _, t := range ts {
		for _, v := range t.data {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	return out
}
