"""Records onnxruntime's bge-small-en-v1.5 vectors into reference/bge-small/ (make bge-reference-record).

    python record_bge_reference.py --model DIR --texts reference/minilm/texts.jsonl --out reference/bge-small

The reference is the model's own ONNX file run by onnxruntime (CPU, fp32) on Hugging Face tokenizers'
ids, truncated at max_seq_length 512 as sentence-transformers truncates, then the [CLS] token's vector
L2-normalized: what sentence-transformers computes from BAAI/bge-small-en-v1.5's modules. The texts are
every 20th text of the MiniLM reference (dev-set texts, accents, CJK, emoji, control characters,
10,000-character texts) plus texts built to land just under, at and over 512 tokens. Before recording,
the committed config.json is checked against the ONNX file's initializers.
"""

import argparse
import json
import os
import sys

import numpy as np
import onnxruntime
import tokenizers

from fetch_bge_small import sha256

STEP = 20  # every STEP-th text of the MiniLM reference


def varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def fields(b):
    """Yields (field number, value) of a protobuf message: ints for varints, bytes for the rest."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("onnx: wire type %d" % wire)
        yield num, v


def initializer_shapes(path):
    """Returns {name: dims} of the ONNX file's graph initializers (ModelProto.graph = 7,
    GraphProto.initializer = 5, TensorProto.dims = 1, TensorProto.name = 8)."""
    with open(path, "rb") as f:
        model = f.read()
    shapes = {}
    for num, graph in fields(model):
        if num != 7:
            continue
        for gnum, tensor in fields(graph):
            if gnum != 5:
                continue
            name, dims = "", []
            for tnum, v in fields(tensor):
                if tnum == 1 and isinstance(v, int):
                    dims.append(v)
                elif tnum == 1:  # packed dims
                    j = 0
                    while j < len(v):
                        d, j = varint(v, j)
                        dims.append(d)
                elif tnum == 8:
                    name = v.decode()
            shapes[name] = dims
    return shapes


def check_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    shapes = initializer_shapes(os.path.join(model_dir, "model.onnx"))
    h = cfg["hidden_size"]
    want = {
        "embeddings.word_embeddings.weight": [cfg["vocab_size"], h],
        "embeddings.position_embeddings.weight": [cfg["max_position_embeddings"], h],
        "embeddings.token_type_embeddings.weight": [cfg["type_vocab_size"], h],
    }
    layers = cfg["num_hidden_layers"]
    for layer in range(layers):
        p = "encoder.layer.%d." % layer
        want[p + "attention.self.query.bias"] = [h]
        want[p + "intermediate.dense.bias"] = [cfg["intermediate_size"]]
        want[p + "output.dense.bias"] = [h]
    for name, dims in want.items():
        got = shapes.get(name, shapes.get("bert." + name))
        if got != dims:
            sys.exit("record_bge_reference: initializer %s has shape %s, config.json says %s" % (name, got, dims))
    if any(n.startswith(("encoder.layer.%d." % layers, "bert.encoder.layer.%d." % layers)) for n in shapes):
        sys.exit("record_bge_reference: the ONNX file has more than %d layers" % layers)
    heads = cfg["num_attention_heads"]
    if h % heads:
        sys.exit("record_bge_reference: hidden %d is not a multiple of %d heads" % (h, heads))
    return cfg


def long_texts(tok, words):
    """Texts whose token count with [CLS] and [SEP] is just under, at and over 512."""
    out = []
    for target in (500, 511, 512, 513, 700):
        n = target - 2
        text = " ".join(words[i % len(words)] for i in range(n))
        ids = tok.encode(text, add_special_tokens=True).ids
        assert len(ids) >= target, (target, len(ids))
        while len(tok.encode(text).ids) > target:
            text = text.rsplit(" ", 1)[0]
        out.append({"source": "long-%d" % target, "text": text})
    out.append({"source": "long-punct", "text": "Wait... what?! (Really.) " * 90})
    out.append({"source": "long-unicode", "text": "Ça coûte 5 € — naïve café, 東京 and Zürich; ünïcödé ✓ " * 40})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--texts", required=True, help="the MiniLM reference texts.jsonl")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cfg = check_config(args.model)
    with open(os.path.join(args.model, "sentence_bert_config.json")) as f:
        max_seq = json.load(f)["max_seq_length"]

    tok = tokenizers.Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
    with open(args.texts, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][::STEP]
    words = [w for r in rows for w in r["text"].split() if w.isalpha() and w.isascii()]
    rows += long_texts(tok, words)

    tok.enable_truncation(max_seq)
    sess = onnxruntime.InferenceSession(os.path.join(args.model, "model.onnx"), providers=["CPUExecutionProvider"])
    vecs = []
    for r in rows:
        enc = tok.encode(r["text"])
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = sess.run(["last_hidden_state"], feed)[0]
        v = hidden[0, 0].astype(np.float64)
        vecs.append((v / np.linalg.norm(v)).astype(np.float32))
        r["tokens"] = len(enc.ids)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "texts.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"source": r["source"], "text": r["text"], "tokens": r["tokens"]}, ensure_ascii=False) + "\n")
    np.stack(vecs).astype("<f4").tofile(os.path.join(args.out, "vectors.f32"))
    meta = {
        "model": "BAAI/bge-small-en-v1.5",
        "model_onnx_sha256": sha256(os.path.join(args.model, "model.onnx")),
        "count": len(rows),
        "dim": cfg["hidden_size"],
        "max_seq_length": max_seq,
        "pooling": "cls",
        "format": "vectors.f32: count x dim float32 little-endian, row-major, L2-normalized; "
        "texts.jsonl: one {source, text, tokens} per row, same order (tokens: ids after truncation)",
        "recorded_with": {
            "onnxruntime": onnxruntime.__version__,
            "tokenizers": tokenizers.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "provider": "CPUExecutionProvider",
            "batch_size": 1,
        },
        "command": "make bge-reference-record (testdata/py/record_bge_reference.py)",
    }
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print("%d texts, %d at the %d-token limit" % (len(rows), sum(r["tokens"] == max_seq for r in rows), max_seq))


if __name__ == "__main__":
    main()
