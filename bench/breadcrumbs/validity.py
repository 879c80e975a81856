#!/usr/bin/env python3
"""Breadcrumb validity on a repository's own history.

Writes notes whose breadcrumbs point at files (with line ranges) and at the
commit they were written at, for commits sampled from the repository's
history, then runs `cairn check --breadcrumbs --json` at the current HEAD and
compares its marks with what the git binary says (git diff -M for renames
and deletions, git show for the line ranges' text): cairn reads git with
go-git, so this is an independent oracle.

Usage: validity.py CAIRN_BINARY REPO [--commits N] [--files K] [--scale NOTES]
Prints the validity rate, the check's wall time and the precision and
recall of the stale marks (moved, changed or gone) against git. With
--scale, it then imports NOTES more notes (3 breadcrumbs each: two of the
sampled file ranges and their commit) and times the check over all of them.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time


def git(repo, *args, check=True):
    r = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {r.stderr}")
    return r


def file_lines(repo, rev, path):
    r = git(repo, "show", f"{rev}:{path}", check=False)
    if r.returncode != 0:
        return None
    return r.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cairn")
    ap.add_argument("repo")
    ap.add_argument("--commits", type=int, default=30)
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--scale", type=int, default=0)
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    history = git(repo, "rev-list", "--first-parent", "HEAD").stdout.split()[1:]  # older than HEAD
    step = max(1, len(history) // a.commits)
    sampled = history[::step][: a.commits]

    data = tempfile.mkdtemp(prefix="cairn-crumbs-")
    env = dict(os.environ, CAIRN_DATA_DIR=data, CAIRN_MODEL="none")
    crumbs = []  # (commit, path, from, to)
    note_of = {}  # commit -> id of the note written at it
    for c in sampled:
        changed = git(repo, "show", "--name-only", "--format=", c).stdout.split()
        picked = 0
        for path in changed:
            lines = file_lines(repo, c, path)
            if not lines or len(lines) < 3:
                continue
            mid = len(lines) // 2
            lo, hi = max(1, mid - 5), min(len(lines), mid + 5)
            crumbs.append((c, path, lo, hi))
            picked += 1
            if picked == a.files:
                break
        files = [f"{p}:{lo}-{hi}" for cc, p, lo, hi in crumbs if cc == c]
        if not files:
            continue
        meta = json.dumps({"breadcrumbs": {"files": files, "commits": [c]}})
        res = subprocess.run([a.cairn, "note", "--agent", "bench", "--meta", meta, "--json", f"note at {c}"],
                             env=env, check=True, capture_output=True, text=True)
        note_of[c] = json.loads(res.stdout)["id"]

    t0 = time.perf_counter()
    out = subprocess.run([a.cairn, "check", "--breadcrumbs", "--repo", repo, "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    rep = json.loads(out)
    marked = {}
    for s in rep["stale"]:
        if s["kind"] == "files":
            marked[(s["message_id"], s["ref"])] = s["state"]

    # What git says, per file breadcrumb.
    renames = {}
    tp = fp = fn = tn = 0
    disagreements = []
    for c, path, lo, hi in crumbs:
        if c not in renames:
            r = {}
            for line in git(repo, "diff", "-M", "--name-status", c, head).stdout.splitlines():
                parts = line.split("\t")
                if parts[0].startswith("R"):
                    r[parts[1]] = parts[2]
            renames[c] = r
        now = renames[c].get(path, path)
        cur = file_lines(repo, head, now)
        old = file_lines(repo, c, path)
        if cur is None:
            truth = "gone"
        elif cur[lo - 1:hi] != old[lo - 1:hi] or hi > len(cur):
            truth = "changed"
        elif now != path:
            truth = "moved"
        else:
            truth = "valid"
        ref = f"{path}:{lo}-{hi}"
        got = marked.get((note_of.get(c), ref), "valid")
        stale_truth, stale_got = truth != "valid", got != "valid"
        if stale_got and stale_truth:
            tp += 1
        elif stale_got:
            fp += 1
        elif stale_truth:
            fn += 1
        else:
            tn += 1
        if got != truth:
            disagreements.append((ref, c[:12], got, truth))

    print(f"repo {repo} HEAD {head[:12]}: {len(sampled)} commits sampled, {rep['messages']} notes, "
          f"{len(crumbs)} file breadcrumbs + {rep['messages']} commit breadcrumbs")
    print(f"cairn: validity {rep['validity_rate']:.3f} ({rep['valid']}/{rep['checked']}), states {rep['states']}")
    print(f"check wall time {wall * 1000:.0f} ms (one process, including the open)")
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    print(f"stale marks vs git: precision {prec:.3f} recall {rec:.3f} (tp {tp} fp {fp} fn {fn} tn {tn})")
    for d in disagreements[:20]:
        print("  disagree", *d)

    if a.scale and crumbs:
        path = os.path.join(data, "scale.jsonl")
        with open(path, "w") as f:
            for i in range(a.scale):
                c, p1, lo1, hi1 = crumbs[i % len(crumbs)]
                _, p2, lo2, hi2 = crumbs[(i * 7 + 3) % len(crumbs)]
                f.write(json.dumps({"channel": "agent-notes:scale", "sender": "scale", "content": f"scale note {i}",
                                    "breadcrumbs": {"files": [f"{p1}:{lo1}-{hi1}", f"{p2}:{lo2}-{hi2}"], "commits": [c]}}) + "\n")
        subprocess.run([a.cairn, "import", "messages", path, "--no-embed"], env=env, check=True, capture_output=True)
        t0 = time.perf_counter()
        out = subprocess.run([a.cairn, "check", "--breadcrumbs", "--repo", repo, "--json"],
                             env=env, check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - t0
        rep = json.loads(out)
        print(f"scale: {rep['messages']} notes, {rep['checked']} breadcrumbs checked in {wall:.2f} s "
              f"({wall / max(1, rep['checked']) * 1e6:.0f} us each), validity {rep['validity_rate']:.3f}")


if __name__ == "__main__":
    main()
