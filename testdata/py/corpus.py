"""Texts for cairn's parity and speed harnesses, built deterministically from the
development sets in ../shared/datasets plus generated edge cases.

Only the standard library is used, so every Python environment can import it.
"""

import json
import os
import random

# Every generated text comes from this seed: the same texts on every machine.
SEED = 20261123


def _jsonl(path, field="text"):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line)[field])
    return out


def dev_texts(datasets):
    """Every text of the dev sets, in file order, as (source, text) pairs."""
    out = []
    with open(os.path.join(datasets, "stsb/dev/pairs.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 3:
                out.append(("stsb", cols[0]))
                out.append(("stsb", cols[1]))
    for name in ("cranfield", "cosqa/dev"):
        d = os.path.join(datasets, name)
        with open(os.path.join(d, "corpus.jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    doc = json.loads(line)
                    if doc.get("title"):
                        out.append((name + "/title", doc["title"]))
                    out.append((name + "/doc", doc["text"]))
        for q in _jsonl(os.path.join(d, "queries.jsonl")):
            out.append((name + "/query", q))
    for conv in ("26.json", "30.json"):
        with open(os.path.join(datasets, "locomo-dev", conv), encoding="utf-8") as f:
            data = json.load(f)
        c = data
        k = 1
        while "session_%d" % k in c:
            for turn in c["session_%d" % k]:
                out.append(("locomo/turn", turn["text"]))
                if turn.get("blip_caption"):
                    out.append(("locomo/caption", turn["blip_caption"]))
            k += 1
        for qa in data["qa"]:
            out.append(("locomo/question", qa["question"]))
    return out


ACCENTS = [
    "café naïve résumé façade jalapeño", "Ångström Øresund Dvořák Łódź Škoda", "São Paulo, Curaçao, Reykjavík",
    "İstanbul ıi İI Straße STRASSE ẞ", "ﬁnancial ﬂow ligatures æsthetic Œuvre", "Ἀθῆναι ΣΟΦΟΣ σοφός Ὀδυσσεύς",
    "Tiếng Việt có dấu: người, được, những", "e\u0301 vs \u00e9 (combining acute vs precomposed)",
    "ǅemal ǈubljana ǋ titlecase digraphs", "ΌΣΟΣ ΟΔΟΣ final sigma ς", "Ⅻ Ⅸ ① ⑳ ½ ¾ ² ³ ℌ ℍ ™ №",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ！？", "Привет, мир! Ёлка ёж", "Ελληνικά: Καλημέρα κόσμε",
    "שלום עולם", "مرحبا بالعالم", "नमस्ते दुनिया", "สวัสดีชาวโลก", "ሰላም ልዑል", "Γειά σου Κόσμε",
]
CJK = [
    "你好，世界！这是一个测试。", "日本語のテキスト、カタカナとひらがな。東京都", "한국어 텍스트입니다. 안녕하세요",
    "中文English混合mixed文本", "𠀀𠀁𠀂 extension B 𪜀 𫝀 𫠠 𬺰", "豈 更 車 compatibility ideographs 丽 丸",
    "「引用」『二重』〈山括弧〉《書名》", "ｶﾀｶﾅ half-width katakana ﾃｽﾄ", "〇一二三四五六七八九十百千万",
]
EMOJI = [
    "I love it 😀😃😄 so much!", "family 👨‍👩‍👧‍👦 zwj sequence", "flags 🇫🇷🇩🇪🇯🇵 regional indicators",
    "skin tones 👍🏻👍🏿 and keycaps 1️⃣ #️⃣", "🔥🔥🔥", "rocket🚀launch", "❤️ vs ❤ (variation selector)",
    "🏳️‍🌈 rainbow flag", "math 𝔸𝔹ℂ 𝒜ℬ 𝐀𝐁𝐂 bold", "⚠️ warning ☃ snowman ♥ ✓ ✗",
]
CONTROLS = [
    "tab\there\nnewline\r\ncarriage", "nul\x00byte", "bell\x07 esc\x1b[31m red\x1b[0m", "del\x7fchar",
    "next line\x85here", "zero\u200bwidth\u200cnon\u200djoiner", "bom\ufeffinside", "soft\u00adhyphen",
    "line\u2028sep para\u2029sep", "vt\x0bff\x0cfs\x1cgs\x1drs\x1eus\x1f", "nbsp\u00a0thin\u2009ideographic\u3000space",
    "rtl\u202emark\u202c and lrm\u200e rlm\u200f", "   leading and trailing   ", "\t\n\r ", "",
    "interlinear\ufff9anchor\ufffbmark", "tag chars \U000e0041\U000e0042",
]
INVALIDISH = [
    "replacement \ufffd char", "noncharacters \uffff \ufffe \U0010ffff", "private use \ue000\uf8ff\U000f0000",
    "unassigned \u0378\u0379 \u0e5c \U000e0000", "lone combining \u0301\u0300 marks", "a\u0308\u0308\u0308 stacked",
    "\u0301 starts with a mark", "variation\ufe0f selectors\ufe0e", "[CLS] special [SEP] tokens [MASK] [PAD] [UNK]",
    "[cls] lowercase special", "x" * 150, "a" * 101 + " " + "b" * 99, "word" + "\u0301" * 120,
    "!!!???...,,,;;;:::", "@#$%^&*()_+-=[]{}|\\;':\",./<>?`~", "1234567890 3.14159 1e-10 0xdeadbeef",
    "https://example.com/path?q=1&x=2#frag", "user@example.com <b>html</b> &amp; &lt;", "snake_case camelCase kebab-case",
    "def f(x):\n    return x ** 2  # comment", "¿¡Qué!? «guillemets» „low“ ‚single‘ ‹›",
]

# Very short texts (chat replies, agent notes): few tokens, where quantization shows most.
SHORT = [
    "Thanks!", "Thank you!", "thanks", "ok", "OK", "Yes.", "No.", "No!", "Hi", "Hello!", "Great!", "lol",
    "Sure thing.", "What?", "Done.", "fixed", "LGTM", "bug", "todo", "See above.", "ack", "Nope", "deploy",
    "rollback", "retry later", "cache miss", "null", "42", "?", "a",
]

# Code-point pools for random texts: (low, high) ranges, weighted by repetition.
POOLS = [
    (0x20, 0x7E), (0x20, 0x7E), (0x20, 0x7E), (0x00, 0x1F), (0x7F, 0x9F), (0xA0, 0x24F), (0x300, 0x36F),
    (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1100, 0x11FF),
    (0x2000, 0x206F), (0x2100, 0x22FF), (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
    (0xE000, 0xF8FF), (0xF900, 0xFAFF), (0xFE00, 0xFE0F), (0xFF00, 0xFFEF), (0xFFF0, 0xFFFF),
    (0x1D400, 0x1D7FF), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF), (0x2F800, 0x2FA1F), (0xE0000, 0xE007F),
]


def _rand_text(rng, n):
    chars = []
    for _ in range(n):
        lo, hi = rng.choice(POOLS)
        c = rng.randint(lo, hi)
        if 0xD800 <= c <= 0xDFFF:  # surrogates cannot be encoded as UTF-8
            c = 0xFFFD
        chars.append(chr(c))
    return "".join(chars)


def _spice(rng, text, pieces):
    """Inserts a few edge-case fragments at random places in text."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(pieces) + text[at:]
    return text


def _long(rng, base, n=10000):
    out = []
    size = 0
    while size < n:
        t = rng.choice(base)
        out.append(t)
        size += len(t) + 1
    return " ".join(out)[:n]


def edge_texts(dev, n_random=1500, n_spiced=1500, n_long=60):
    """Generated edge cases as (source, text) pairs: fixed lists, random code points,
    dev texts with edge fragments inserted, and 10,000-character texts."""
    rng = random.Random(SEED)
    fixed = ACCENTS + CJK + EMOJI + CONTROLS + INVALIDISH + SHORT
    out = [("edge/fixed", t) for t in fixed]
    for _ in range(n_random):
        out.append(("edge/random", _rand_text(rng, rng.randint(1, 80))))
    dev_plain = [t for _, t in dev] or fixed
    for _ in range(n_spiced):
        out.append(("edge/spiced", _spice(rng, rng.choice(dev_plain), fixed)))
    for i in range(n_long):
        kind = i % 4
        if kind == 0:
            t = _long(rng, dev_plain)
        elif kind == 1:
            t = _long(rng, CJK + EMOJI)
        elif kind == 2:
            t = _spice(rng, _long(rng, dev_plain), fixed)
        else:
            t = _rand_text(rng, 10000)
        out.append(("edge/long", t))
    return out


def codepoint_texts(per_text=40):
    """Every Unicode scalar value once, as the word x<c>y (so a dropped, split or
    stripped character shows), per_text words a text."""
    words = ["x%sy" % chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    return [("codepoints/%x" % i, " ".join(words[i:i + per_text])) for i in range(0, len(words), per_text)]


def all_texts(datasets):
    """Dev texts (when datasets is a directory) then edge cases."""
    if datasets and os.path.isdir(datasets):
        dev = dev_texts(datasets)
        return dev + edge_texts(dev)
    # Without the dev sets, more generated texts keep the corpus above 5,000.
    return edge_texts([], n_random=4000)


def sample(texts, n, seed=SEED):
    """A deterministic sample of n items, in their original order."""
    if len(texts) <= n:
        return list(texts)
    idx = sorted(random.Random(seed).sample(range(len(texts)), n))
    return [texts[i] for i in idx]
