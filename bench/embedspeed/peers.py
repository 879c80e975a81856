"""One configuration of the peers in the embedding speed comparison (run by run.py in
a fresh process each time): ONNX Runtime on an ONNX file of all-MiniLM-L6-v2, or
sentence-transformers on CPU torch. Prints the same JSON result as cairn's
bench/embedspeed program.

    python peers.py --runtime ort-fp32|ort-int8|st-torch --threads N --model FP32_DIR \
        [--onnx FILE] --sentences FILE --batches 1,8,32 [--no-spin]
"""

import argparse
import json
import os
import resource
import time


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb():
    """VmHWM of /proc/self/status (getrusage's maxrss would carry the parent's peak over exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class OnnxEncoder:
    """Tokenizer (Hugging Face tokenizers, as sentence-transformers does), ONNX Runtime
    forward pass, attention-masked mean pooling and L2 normalization."""

    def __init__(self, onnx_path, model_dir, threads, spin=True):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.np = np
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if not spin:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.sess = ort.InferenceSession(onnx_path, sess_options=so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.enable_truncation(max_length=256)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def encode(self, texts):
        np = self.np
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        h = self.sess.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        v = (h * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)


class TorchEncoder:
    def __init__(self, model_dir, threads):
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        self.model = SentenceTransformer(model_dir, device="cpu")
        self.model.eval()

    def encode(self, texts):
        return self.model.encode(texts, batch_size=len(texts), convert_to_numpy=True, show_progress_bar=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", required=True, choices=["ort-fp32", "ort-int8", "st-torch"])
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--model", required=True, help="sentence-transformers directory (tokenizer, torch weights)")
    ap.add_argument("--onnx", help="ONNX file for ort-*")
    ap.add_argument("--sentences", required=True)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--no-spin", action="store_true", help="ONNX Runtime's intra-op threads sleep while they wait")
    a = ap.parse_args()
    with open(a.sentences, encoding="utf-8") as f:
        sets = json.load(f)
    sizes = [int(x) for x in a.batches.split(",")]

    if a.runtime == "st-torch":
        import torch  # imported before the clock: load time is the model's, as for ONNX Runtime

        torch.set_num_interop_threads(1)
        import sentence_transformers  # noqa: F401
    else:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    t0 = time.perf_counter()
    if a.runtime == "st-torch":
        enc = TorchEncoder(a.model, a.threads)
    else:
        enc = OnnxEncoder(a.onnx, a.model, a.threads, spin=not a.no_spin)
    res = {"runtime": a.runtime, "threads": a.threads, "load_ms": (time.perf_counter() - t0) * 1000,
           "throughput": {}, "per_cpu_sec": {}, "p50_ms": {}, "p99_ms": {}}
    names = sorted(sets)
    for name in names:
        enc.encode(sets[name][:32])
    for name in names:
        texts = sets[name]
        for bs in sizes:
            lat = []
            c0 = cpu_seconds()
            w0 = time.perf_counter()
            for i in range(0, len(texts), bs):
                q = time.perf_counter()
                enc.encode(texts[i:i + bs])
                lat.append(time.perf_counter() - q)
            wall, cpu = time.perf_counter() - w0, cpu_seconds() - c0
            key = "%s/batch=%d" % (name, bs)
            res["throughput"][key] = len(texts) / wall
            res["per_cpu_sec"][key] = len(texts) / cpu if cpu > 0 else 0.0
            if bs == 1:
                lat.sort()
                res["p50_ms"][name] = lat[len(lat) // 2] * 1000
                res["p99_ms"][name] = lat[min(len(lat) - 1, len(lat) * 99 // 100)] * 1000
    res["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
