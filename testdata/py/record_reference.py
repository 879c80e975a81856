"""Records sentence-transformers' all-MiniLM-L6-v2 vectors (CPU torch, fp32) for the
embedding parity tests: texts.jsonl ({"source", "text"} per line), vectors.f32 (count x dim
float32, little-endian, row-major) and meta.json. Run by `make parity-record` in the
reference environment (make py-reference).

    python record_reference.py --datasets DIR --model FP32_DIR --out DIR
"""

import argparse
import hashlib
import json
import os
import platform

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

import corpus


def texts(datasets):
    """About 1,500 texts: a sample of every dev set (long documents included, so
    truncation at 256 tokens is exercised), the fixed edge cases, and samples of
    the random, spiced and 10,000-character edge texts."""
    dev = corpus.dev_texts(datasets)
    by_source = {}
    for src, t in dev:
        by_source.setdefault(src, []).append((src, t))
    picked = []
    for src in sorted(by_source):
        picked += corpus.sample(by_source[src], 120)
    edge = corpus.edge_texts(dev)
    by_kind = {}
    for src, t in edge:
        by_kind.setdefault(src, []).append((src, t))
    picked += by_kind["edge/fixed"]
    picked += corpus.sample(by_kind["edge/random"], 60)
    picked += corpus.sample(by_kind["edge/spiced"], 120)
    picked += corpus.sample(by_kind["edge/long"], 20)
    return picked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.manual_seed(0)
    items = texts(a.datasets)
    model = SentenceTransformer(a.model, device="cpu")
    model.eval()
    vecs = model.encode([t for _, t in items], batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    vecs = np.ascontiguousarray(vecs, dtype="<f4")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "texts.jsonl"), "w", encoding="utf-8") as f:
        for src, t in items:
            f.write(json.dumps({"source": src, "text": t}, ensure_ascii=False) + "\n")
    vecs.tofile(os.path.join(a.out, "vectors.f32"))
    with open(os.path.join(a.model, "model.safetensors"), "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_safetensors_sha256": sha,
        "count": int(vecs.shape[0]),
        "dim": int(vecs.shape[1]),
        "max_seq_length": model.max_seq_length,
        "format": "vectors.f32: count x dim float32 little-endian, row-major, L2-normalized; "
                  "texts.jsonl: one {source, text} per row, same order",
        "recorded_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "device": "cpu",
            "batch_size": 32,
        },
        "command": "make parity-record (testdata/py/record_reference.py, texts from testdata/py/corpus.py)",
    }
    with open(os.path.join(a.out, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print("wrote %d x %d vectors to %s" % (vecs.shape[0], vecs.shape[1], a.out))


if __name__ == "__main__":
    main()
