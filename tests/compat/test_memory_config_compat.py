"""check's rating of a FileMemory config.json value matches what the real library does with it:
``error`` exactly when FileMemory raises or loses items because of it; and ``memory store`` refuses
exactly those values of the keys it reads."""

from __future__ import annotations

import json

from praisonmem.core.memory import filememory_config
from tests.compat.conftest import last_json, run_library

# A small positive limit trims by design, so only the defaults stand for the good values of the limits.
CASES = [
    ("short_term_limit", v) for v in ("lots", "100", None, [], -1, -1000, 0, 2.5, 3.0, True, False, 100)
] + [
    ("long_term_limit", v) for v in ("lots", None, {}, 0, -1, 2.5, True, False, 1000)
] + [
    ("importance_threshold", v) for v in ("lots", None, [], True, False, -1, 2, 0.7)
] + [
    ("episodic_retention_days", v) for v in ("lots", None, -1, 0, False, True, 2.5, 30)
] + [
    ("auto_promote", v) for v in ("no", 0, 1, None, True)
] + [("enable_summarization", "x"), ("summarization_threshold", "lots"), ("summarization_threshold", -3)]

# Each case runs twice, with 50 and with 100 short-term items (the oldest unimportant; at 100 the next
# add_short_term overflows the default limit and promotes), 3 long-term, today's episodic file: one
# add_short_term, one add_long_term, cleanup_episodic. "lost" counts the earlier items (and episodic
# files) that survive with the default config but not with the case's value.
OUTCOMES = """
    import datetime, json, logging, os, sys, tempfile
    logging.disable(logging.CRITICAL)
    from praisonaiagents.memory.file_memory import FileMemory

    def item(i, importance):
        return {"id": f"i{i}", "content": f"note {i}", "metadata": {}, "created_at": 1.0 + i,
                "updated_at": 1.0 + i, "access_count": 0, "importance": importance}

    def run(config, count):
        base = tempfile.mkdtemp()
        user = os.path.join(base, "u")
        os.makedirs(os.path.join(user, "episodic"))
        today = datetime.date.today().strftime("%Y-%m-%d")
        files = {"config.json": config,
                 "short_term.json": [item(i, 0.1 if i == 0 else 0.9) for i in range(count)],
                 "long_term.json": [item(1000 + i, 0.8) for i in range(3)],
                 f"episodic/{today}.json": [item(2000, 0.5)]}
        for name, data in files.items():
            with open(os.path.join(user, name), "w") as handle:
                json.dump(data, handle)
        raised = []
        for name, call in (("add_short_term", lambda fm: fm.add_short_term("new", importance=0.9)),
                           ("add_long_term", lambda fm: fm.add_long_term("new", importance=0.9)),
                           ("cleanup_episodic", lambda fm: fm.cleanup_episodic())):
            try:
                call(FileMemory(user_id="u", base_path=base))
            except Exception as exc:
                raised.append(f"{name}: {type(exc).__name__}")
        survivors = set()
        for name in ("short_term.json", "long_term.json"):
            with open(os.path.join(user, name)) as handle:
                survivors |= {i["id"] for i in json.load(handle) if i["content"] != "new"}
        survivors |= {f"episodic:{n}" for n in os.listdir(os.path.join(user, "episodic"))}
        return raised, survivors

    counts = (50, 100)
    baseline = {n: run(dict(FileMemory.DEFAULT_CONFIG), n)[1] for n in counts}
    out = []
    for key, value in json.loads(sys.argv[1]):
        outcome = {"raised": [], "lost": 0}
        for n in counts:
            raised, survivors = run({**FileMemory.DEFAULT_CONFIG, key: value}, n)
            outcome["raised"] += raised
            outcome["lost"] += len(baseline[n] - survivors)
        out.append(outcome)
    print(json.dumps(out))
"""


def test_check_rates_as_error_exactly_what_the_library_raises_on_or_loses_items_with(tmp_path):
    outcomes = last_json(run_library(OUTCOMES, json.dumps(CASES), home=tmp_path / "h", cwd=tmp_path))
    for (key, value), outcome in zip(CASES, outcomes, strict=True):
        found = filememory_config.problem(key, value)
        harmful = bool(outcome["raised"] or outcome["lost"])
        assert (found is not None and found[0] == "error") == harmful, (key, value, outcome, found)


def test_store_refuses_exactly_the_harmful_values_of_the_keys_it_reads(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    user = tmp_path / ".praisonai" / "memory" / "u"
    for key, value in CASES:
        flags = ["--long"] if key == "long_term_limit" else []
        if key not in ("short_term_limit", "long_term_limit", "importance_threshold"):
            continue
        if user.exists():
            (user / "config.json").write_text("{}")
        assert cli("memory", "store", "seed", "--user-id", "u", *flags).exit_code == 0
        (user / "config.json").write_text(json.dumps({key: value}))
        result = cli("memory", "store", "x", "--user-id", "u", *flags)
        found = filememory_config.problem(key, value)
        refused = found is not None and found[0] == "error"
        assert result.exit_code == (4 if refused else 0), (key, value, result.stderr)
