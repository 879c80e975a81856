package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// bertConfig is the subset of a Hugging Face config.json the encoder needs.
type bertConfig struct {
	NameOrPath   string  `json:"_name_or_path"`
	ModelType    string  `json:"model_type"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	Vocab        int     `json:"vocab_size"`
	MaxPos       int     `json:"max_position_embeddings"`
	TypeVocab    int     `json:"type_vocab_size"`
	Eps          float64 `json:"layer_norm_eps"`
	Act          string  `json:"hidden_act"`
	PosType      string  `json:"position_embedding_type"`
}

// Pooling is how token vectors become one sentence vector.
type Pooling int

const (
	// PoolMean averages the token vectors ([CLS] and [SEP] included), as
	// sentence-transformers' pooling_mode_mean_tokens.
	PoolMean Pooling = iota + 1
	// PoolCLS takes the [CLS] token's vector.
	PoolCLS
)

func (p Pooling) String() string {
	switch p {
	case PoolMean:
		return "mean"
	case PoolCLS:
		return "cls"
	}
	return fmt.Sprintf("Pooling(%d)", int(p))
}

// modelDir is what Open reads from a sentence-transformers model directory.
type modelDir struct {
	cfg       bertConfig
	pooling   Pooling
	maxSeq    int               // sentence_bert_config.json max_seq_length (0 if absent)
	prompts   map[string]string // config_sentence_transformers.json prompts
	defPrompt string
	normalize bool // a Normalize module is listed in modules.json
}

func readJSON(fsys fs.FS, name string, v any) (bool, error) {
	b, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("embed: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrBadModel, name, err)
	}
	return true, nil
}

// readModelDir reads the configuration files of a model; where names the
// model in errors (its directory).
func readModelDir(fsys fs.FS, where string) (*modelDir, error) {
	md := &modelDir{pooling: PoolMean}
	ok, err := readJSON(fsys, "config.json", &md.cfg)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s has no config.json", ErrBadModel, where)
	}
	c := &md.cfg
	if c.TypeVocab == 0 {
		c.TypeVocab = 2
	}
	if c.Eps == 0 {
		c.Eps = 1e-12
	}
	if c.Hidden <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Intermediate <= 0 || c.Vocab <= 0 || c.MaxPos <= 0 || c.Hidden%c.Heads != 0 {
		return nil, fmt.Errorf("%w: config.json: inconsistent sizes %+v", ErrBadModel, *c)
	}
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	if _, err := readJSON(fsys, "modules.json", &modules); err != nil {
		return nil, err
	}
	poolPath := "1_Pooling"
	for _, m := range modules {
		switch {
		case strings.HasSuffix(m.Type, ".Pooling"):
			poolPath = m.Path
		case strings.HasSuffix(m.Type, ".Normalize"):
			md.normalize = true
		}
	}
	var pool struct {
		CLS      bool `json:"pooling_mode_cls_token"`
		Mean     bool `json:"pooling_mode_mean_tokens"`
		Max      bool `json:"pooling_mode_max_tokens"`
		MeanSqrt bool `json:"pooling_mode_mean_sqrt_len_tokens"`
	}
	if ok, err := readJSON(fsys, path.Join(poolPath, "config.json"), &pool); err != nil {
		return nil, err
	} else if ok {
		switch {
		case pool.Max || pool.MeanSqrt || (pool.CLS && pool.Mean):
			return nil, fmt.Errorf("%w: pooling %+v (only one of mean or cls is supported)", ErrUnsupported, pool)
		case pool.CLS:
			md.pooling = PoolCLS
		}
	}
	var sb struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if _, err := readJSON(fsys, "sentence_bert_config.json", &sb); err != nil {
		return nil, err
	}
	md.maxSeq = sb.MaxSeqLength
	var st struct {
		Prompts           map[string]string `json:"prompts"`
		DefaultPromptName *string           `json:"default_prompt_name"`
	}
	if _, err := readJSON(fsys, "config_sentence_transformers.json", &st); err != nil {
		return nil, err
	}
	md.prompts = st.Prompts
	if st.DefaultPromptName != nil {
		md.defPrompt = *st.DefaultPromptName
	}
	return md, nil
}

// weightsFile is the file whose SHA-256 identifies the model: model.safetensors
// if present, else model.onnx.
func weightsFile(fsys fs.FS, where string) (string, error) {
	for _, n := range []string{"model.safetensors", "model.onnx"} {
		if _, err := fs.Stat(fsys, n); err == nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("%w: %s has neither model.safetensors nor model.onnx", ErrBadModel, where)
}
