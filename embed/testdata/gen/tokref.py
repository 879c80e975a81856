"""Independent reference for Hugging Face's BertTokenizer (tokenizer.json:
BertNormalizer + BertPreTokenizer + WordPiece + [CLS]/[SEP] template), written
from the algorithm's description with Python's unicodedata; used once to record
embed/testdata/tokenizer_parity.json. Not imported by Go code.

usage: /usr/bin/python3 tokref.py TOKENIZER_JSON CORPUS_TXT OUT_JSON
CORPUS_TXT lines are Python string literals (so control characters and
invalid UTF-8 can be written with escapes); bytes literals are decoded as
UTF-8 with replacement, which is how a Go string with invalid bytes reads.
"""
import ast, json, sys, unicodedata


class BertRef:
    def __init__(self, tj, max_len):
        n = tj.get("normalizer") or {}
        self.clean = n.get("clean_text", True)
        self.chinese = n.get("handle_chinese_chars", True)
        self.lower = n.get("lowercase", True)
        sa = n.get("strip_accents")
        self.strip = self.lower if sa is None else sa
        m = tj["model"]
        self.vocab = m["vocab"]
        self.unk = m.get("unk_token", "[UNK]")
        self.prefix = m.get("continuing_subword_prefix", "##")
        self.maxchars = m.get("max_input_chars_per_word", 100)
        self.added = {a["content"]: a["id"] for a in tj.get("added_tokens", []) if not a.get("normalized")}
        self.max_len = max_len

    # Unicode White_Space (what Rust's char::is_whitespace tests).
    WS = set("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {chr(c) for c in range(0x2000, 0x200B)}

    @classmethod
    def is_ws(cls, c):
        return c in cls.WS

    @staticmethod
    def is_control(c):
        if c in "\t\n\r":
            return False
        return unicodedata.category(c).startswith("C")

    @staticmethod
    def is_punct(c):
        o = ord(c)
        if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
            return True
        return unicodedata.category(c).startswith("P")

    @staticmethod
    def is_cjk(o):
        return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF
                or 0x2A700 <= o <= 0x2B73F or 0x2B740 <= o <= 0x2B81F or 0x2B820 <= o <= 0x2CEAF
                or 0xF900 <= o <= 0xFAFF or 0x2F800 <= o <= 0x2FA1F)

    def normalize(self, s):
        out = []
        for c in s:
            if self.clean:
                if c == "\0" or c == "\ufffd" or self.is_control(c):
                    continue
                if self.is_ws(c):
                    out.append(" ")
                    continue
            if self.chinese and self.is_cjk(ord(c)):
                out.append(" " + c + " ")
                continue
            out.append(c)
        s = "".join(out)
        if self.strip:
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
        if self.lower:
            s = "".join(c.lower() for c in s)  # per character, no context (as the Rust normalizer)
        return s

    def words(self, s):
        words, cur = [], []
        for c in s:
            if self.is_ws(c):
                if cur:
                    words.append("".join(cur)); cur = []
            elif self.is_punct(c):
                if cur:
                    words.append("".join(cur)); cur = []
                words.append(c)
            else:
                cur.append(c)
        if cur:
            words.append("".join(cur))
        return words

    def wordpiece(self, w):
        if len(w) > self.maxchars:
            return [self.vocab[self.unk]]
        ids, start = [], 0
        while start < len(w):
            end, cur = len(w), None
            while start < end:
                sub = w[start:end]
                if start > 0:
                    sub = self.prefix + sub
                if sub in self.vocab:
                    cur = self.vocab[sub]
                    break
                end -= 1
            if cur is None:
                return [self.vocab[self.unk]]
            ids.append(cur)
            start = end
        return ids

    def pieces(self, text):
        # Added tokens are matched verbatim (leftmost, then longest) before normalization.
        out, rest = [], text
        toks = sorted(self.added, key=len, reverse=True)
        while rest:
            best = None
            for t in toks:
                i = rest.find(t)
                if i >= 0 and (best is None or i < best[0]):
                    best = (i, t)
            seg = rest if best is None else rest[:best[0]]
            for w in self.words(self.normalize(seg)):
                out.extend(self.wordpiece(w))
            if best is None:
                break
            out.append(self.added[best[1]])
            rest = rest[best[0] + len(best[1]):]
        return out

    def encode(self, text):
        p = self.pieces(text)[: self.max_len - 2]
        return [self.vocab["[CLS]"]] + p + [self.vocab["[SEP]"]]


def main():
    tj = json.load(open(sys.argv[1], encoding="utf-8"))
    ref = BertRef(tj, 256)
    cases = []
    for line in open(sys.argv[2], encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        v = ast.literal_eval(line)
        raw = v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
        text = raw.decode("utf-8", "replace")
        cases.append({"hex": raw.hex(), "ids": ref.encode(text)})
    with open(sys.argv[3], "w") as f:
        f.write('{"tokenizer": "all-minilm-l6-v2.json", "max_len": 256, "cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
