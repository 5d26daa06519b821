"""A scripted editor session against `harness lsp` on the Battleship harness files.

Usage: python3 editors/lsp-session.py PATH/TO/harness DIR, where DIR holds belief.harness,
planning.harness and reflection.harness (harnesses/battleship). It opens the three files,
prints their diagnostics, then hovers, goes to definitions and completes in planning.harness,
types a typo and asks for its quick fix, as an editor would.
"""
import json, subprocess, sys
BIN, DIR = sys.argv[1], sys.argv[2].rstrip("/")
p = subprocess.Popen([BIN, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
nid = 0
def send(m):
    b = json.dumps(m).encode(); p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def recv():
    n = 0
    while True:
        l = p.stdout.readline().decode().strip()
        if not l: break
        if l.lower().startswith("content-length"): n = int(l.split(":")[1])
    return json.loads(p.stdout.read(n))
def req(method, params):
    global nid; nid += 1; send({"jsonrpc": "2.0", "id": nid, "method": method, "params": params})
    while True:
        m = recv()
        if m.get("id") == nid: return m
def diags(uri):
    while True:
        m = recv()
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri: return m["params"]["diagnostics"]
def pos(text, needle, delta=0, nth=0):
    i = -1
    for _ in range(nth + 1): i = text.index(needle, i + 1)
    i += delta; before = text[:i]
    return {"line": before.count("\n"), "character": i - (before.rfind("\n") + 1)}
req("initialize", {"capabilities": {}}); send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
texts = {}
for f in ["belief", "planning", "reflection"]:
    uri = "file://%s/%s.harness" % (DIR, f); texts[f] = open("%s/%s.harness" % (DIR, f)).read()
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "harness", "version": 1, "text": texts[f]}}})
    d = diags(uri)
    print("== diagnostics", f, len(d)); [print("  ", x["code"], x["range"]["start"], x["message"].splitlines()[0]) for x in d[:8]]
U = "file://%s/planning.harness" % DIR; T = texts["planning"]
def td(needle, delta=0, nth=0): return {"textDocument": {"uri": U}, "position": pos(T, needle, delta, nth)}
for needle, delta in [("hit_prob[c]", 1), ("game.frontier()", 6), ("frontier.max_by", 11), ("value_of_shot(best_shot_p)", 2), ("Phase = if", 1), ("compat {", 1)]:
    r = req("textDocument/hover", td(needle, delta)).get("result")
    print("== hover", repr(needle), "->", (r or {}).get("contents", {}).get("value", "null").replace("\n", " | ")[:200])
for needle, delta in [("hit_prob[c]", 1), ("value_of_shot(best_shot_p)", 2), ("compat {", 1)]:
    r = req("textDocument/definition", td(needle, delta)).get("result")
    print("== definition", repr(needle), "->", r and (r["uri"], r["range"]["start"]))
r = req("textDocument/completion", td("game.frontier()", 5))["result"]
print("== completion after game.:", sorted(i["label"] for i in r)[:40])
r = req("textDocument/completion", td("frontier.max_by", 0))["result"]
print("== completion in planning (%d items); has hit_prob: %s; has reflection members: %s" % (len(r), any(i["label"] == "hit_prob" for i in r), [i["label"] for i in r if i["label"] in ("confidence", "cooldown")]))
# Break something and fix it.
edit = {"textDocument": {"uri": U, "version": 2}, "contentChanges": [{"range": {"start": pos(T, "hit_prob[c]"), "end": pos(T, "hit_prob[c]", 8)}, "text": "hit_prb"}]}
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": edit})
d = diags(U); print("== after typo:", [(x["code"], x["message"].splitlines()) for x in d])
ca = req("textDocument/codeAction", {"textDocument": {"uri": U}, "range": {"start": pos(T, "hit_prob[c]"), "end": pos(T, "hit_prob[c]")}, "context": {"diagnostics": []}})["result"]
print("== code actions:", [a["title"] for a in ca])
req("shutdown", None); send({"jsonrpc": "2.0", "method": "exit"}); print("exit code", p.wait())
