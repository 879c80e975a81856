"""Independent numpy (float64) forward pass of the BERT test models written by
`go run ./embed/testdata/gen`, run once to record embed/testdata/reference_<model>.json.
Reads model.safetensors directly (its own parser) and tokenizes with tokref.py.

usage: /usr/bin/python3 reference.py MODELS_DIR OUT_DIR
"""
import json, math, os, struct, sys
import numpy as np
from tokref import BertRef

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "cairn embeds every message and every query itself.",
    "Café naïve résumé — İstanbul, Straße and 中文分词!",
    "a",
    "",
    "Search must stay under one hundred milliseconds end to end, even with many agents writing messages "
    "to many channels at once, so embedding must never be the bottleneck of the whole pipeline.",
    " ".join("token%d" % i for i in range(150)),  # far past 256 word pieces: truncated
]


def load_safetensors(path):
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    data = b[8 + n:]
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        assert h["dtype"] == "F32"
        s, e = h["data_offsets"]
        out[name] = np.frombuffer(data[s:e], dtype="<f4").reshape(h["shape"]).astype(np.float64)
    return out


def layer_norm(x, g, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


erf = np.vectorize(math.erf)


def forward(w, cfg, ids):
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    dh = H // nh
    eps = cfg["layer_norm_eps"]
    L = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:L] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for l in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % l
        lin = lambda t, name: t @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(L, nh, dh).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(L, nh, dh).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(L, nh, dh).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(1, 0, 2).reshape(L, H)
        x = layer_norm(lin(c, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"], eps)
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x


def main():
    models, out = sys.argv[1], sys.argv[2]
    for name in sys.argv[3:] or ["tiny", "tiny-cls", "minilm"]:
        d = os.path.join(models, name)
        cfg = json.load(open(os.path.join(d, "config.json")))
        pool = json.load(open(os.path.join(d, "1_Pooling", "config.json")))
        maxlen = json.load(open(os.path.join(d, "sentence_bert_config.json")))["max_seq_length"]
        tok = BertRef(json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8")), maxlen)
        w = load_safetensors(os.path.join(d, "model.safetensors"))
        cases = []
        for s in SENTENCES:
            ids = tok.encode(s)
            hs = forward(w, cfg, ids)
            v = hs[0] if pool["pooling_mode_cls_token"] else hs.mean(0)
            v = v / np.linalg.norm(v)
            cases.append({"text": s, "ids": ids, "vector": [float("%.9g" % f) for f in v]})
        with open(os.path.join(out, "reference_%s.json" % name), "w") as f:
            f.write('{"model": "%s", "cases": [\n' % name)
            f.write(",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases))
            f.write("\n]}\n")
        print(name, "ok", file=sys.stderr)


if __name__ == "__main__":
    main()
