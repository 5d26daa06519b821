#!/usr/bin/env python3
"""The CHILL figures the README reports beyond `harness ablate`'s own, from a run folder.

Usage: scripts/chill-figures.py RUN_FOLDER repair|search

Per arm: the utility U (repair: solved - tokens_env/10^6; search: solved - 0.5*probes/16), the
environment cost per solved task, revisions authorised by ARCO (its decide rules after the
completion gate's) per turn and per episode, the completion gate's redirects, Full turns (repair:
turns whose revise block counted one) and the paper's revision rate per Full turn; then paired
bootstrap intervals (2,000 resamples of the episode pairs) of the cost per solved task for
always-full - chill and chill - reference.
"""
import collections
import glob
import json
import os
import random
import sys

folder, game = sys.argv[1], sys.argv[2]
# The completion gate's rules come first in each ARCO's decide block.
gate_rules = {"repair": 2, "search": 1}[game]
cost = {"repair": "tokens_env", "search": "probes"}[game]


def utility(m):
    solved = 1.0 if m["solved"] else 0.0
    return solved - (m["tokens_env"] / 1e6 if game == "repair" else 0.5 * m["probes"] / 16)


rows = [json.loads(line) for line in open(os.path.join(folder, "games.jsonl"))]
arms = collections.defaultdict(dict)
for r in rows:
    arms[r["arm"]][(r["instance"], r["seed"])] = r

for arm, episodes in arms.items():
    turns = full = revisions = on_full = redirects = 0
    families = collections.Counter()
    for path in glob.glob(os.path.join(folder, "traces", arm, "*.jsonl")):
        full_turns, chosen = set(), []
        for line in open(path):
            e = json.loads(line)
            if e.get("event") == "patch" and e.get("field") == "arco.full_calls":
                full_turns.add(e["turn"])
            elif e.get("event") == "chosen":
                chosen.append((e["turn"], e["layer"], e["rule"], e["action"]))
        turns += len(chosen)
        full += len(full_turns)
        for turn, layer, rule, action in chosen:
            if layer != "arco":
                continue
            if rule < gate_rules:
                redirects += 1
            else:
                revisions += 1
                families[action] += 1
                on_full += turn in full_turns
    n = len(episodes)
    solved = sum(1 for r in episodes.values() if r["metrics"]["solved"])
    u = sum(utility(r["metrics"]) for r in episodes.values()) / n
    per_solved = sum(r["metrics"][cost] for r in episodes.values()) / max(solved, 1)
    rate = f"{on_full / full:.1%}" if full else "-"
    print(
        f"{arm}: U {u:.3f}; {cost} per solved {per_solved:,.2f}; revisions {revisions / turns:.2%} "
        f"of turns ({revisions / n:.2f} per episode) {dict(families)}; gate redirects "
        f"{redirects / n:.2f} per episode; Full turns {full / n:.2f} per episode, revision rate "
        f"per Full turn {rate}"
    )

keys = sorted(arms["reference"])


def per_solved(arm, ks):
    total = sum(arms[arm][k]["metrics"][cost] for k in ks)
    n = sum(1 for k in ks if arms[arm][k]["metrics"]["solved"])
    return total / n if n else float("inf")


rng = random.Random(7)
for a, b in [("always-full", "chill"), ("chill", "reference")]:
    if a not in arms or b not in arms:
        continue
    point = per_solved(a, keys) - per_solved(b, keys)
    boots = sorted(
        per_solved(a, ks) - per_solved(b, ks)
        for ks in ([keys[rng.randrange(len(keys))] for _ in keys] for _ in range(2000))
    )
    print(f"{cost} per solved, {a} - {b}: {point:+,.2f} [{boots[50]:+,.2f}, {boots[1949]:+,.2f}]")
