"""Writes the Hugging Face `tokenizers` token ids of the parity corpus (corpus.py) as
JSON lines {"source", "text", "ids", "tokens"}, truncated at max_seq_length as
sentence-transformers truncates (its Transformer module calls the tokenizer with
truncation="longest_first", max_length=max_seq_length; 256 for all-MiniLM-L6-v2).

    python tokparity.py --model FP32_DIR --datasets DIR --out FILE [--every N]
"""

import argparse
import json
import os

from tokenizers import Tokenizer

import corpus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--datasets", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--codepoints", action="store_true",
                    help="instead: every code point, as words x<c>y, 40 words a text")
    ap.add_argument("--every", type=int, default=1,
                    help="keep every Nth text only (a sample spread over the whole corpus)")
    a = ap.parse_args()
    with open(os.path.join(a.model, "sentence_bert_config.json"), encoding="utf-8") as f:
        max_len = json.load(f)["max_seq_length"]
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)
    items = corpus.codepoint_texts() if a.codepoints else corpus.all_texts(a.datasets)
    items = items[::a.every]
    encs = tok.encode_batch([t for _, t in items])
    with open(a.out, "w", encoding="utf-8") as f:
        for (src, text), enc in zip(items, encs):
            f.write(json.dumps({"source": src, "text": text, "ids": enc.ids, "tokens": enc.tokens},
                               ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
