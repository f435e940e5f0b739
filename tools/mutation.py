"""Mutation testing of lexprobe's analysis, metric, reader and store modules with cosmic-ray.

    python tools/mutation.py [MODULE ...] [--rev REV] [--sample SHARE] [--minutes M] [--out FILE] [--retest DIR]
    python tools/mutation.py --catalogue [MODULE ...] [--only ID ...] [--rev REV] [--out FILE]

Modules, their fast test commands and the operators kept are in tools/mutation/modules.toml (default: all of
them, in file order). Slow (minutes to hours): not part of the README's test command and not in CI.

cosmic-ray mutates a module's source in place and runs the module's test command once per mutant. So this runs
in a throwaway git worktree of REV (default HEAD; committed code and tests only) beside the repository, never in
the working tree: the folder ``engine/`` is imported as ``lexprobe`` through a symlink put first on PYTHONPATH
(the editable install's finder would otherwise import the working tree's copy), and ``../shared`` is linked so
the tests find the real data. Prints and writes (``--out``, default mutation-report.md) per module: mutants,
killed (tests failed, crashed or timed out), survived, skipped by the operator/function filters, and every
survivor's diff. The worktree is removed at the end; the cosmic-ray sessions are kept, so that after new tests
``--retest DIR`` runs only the survivors again and names the test that now kills each.

``--catalogue`` runs the semantic mutants of tools/mutation/catalogue.toml instead: each entry is one exact patch
(``old`` -> ``new`` in ``file``, ``old`` found exactly once) that changes a definition a paper or the code's
contract gives (a seed, a bound, an exclusion, a denominator, a default, a tie rule). In the same throwaway
worktree each entry is applied alone and the test command of its ``module`` (modules.toml) is run; an entry whose
``old`` text is not found exactly once is reported **stale** (the code moved: fix the entry). Killed means the
tests failed (the first failing test is named) or timed out.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "tools" / "mutation" / "modules.toml"
CATALOGUE = REPO / "tools" / "mutation" / "catalogue.toml"


def cosmic_ray_config(module: dict, exclude: list[str], python: str) -> str:
    lines = [
        "[cosmic-ray]",
        f'module-path = "{module["path"]}"',
        f'timeout = {float(module.get("timeout", 120))}',
        "excluded-modules = []",
        f'test-command = "{shlex.join(pytest_command(module, python))}"',
        "[cosmic-ray.distributor]",
        'name = "local"',
        "[cosmic-ray.filters.operators-filter]",
        "exclude-operators = [" + ", ".join(f"'{e}'" for e in exclude) + "]",
    ]
    return "\n".join(lines) + "\n"


def function_lines(path: Path, names: list[str]) -> list[tuple[int, int]]:
    """Line ranges of the functions called ``names`` (at any depth) in the module at ``path``."""
    tree = ast.parse(path.read_text())
    return [(n.lineno, n.end_lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in names]


def not_code(path: Path) -> tuple[list[tuple], list[tuple]]:
    """Spans ((line, col), (end line, end col)) that run no code (type annotations, which ``from __future__
    import annotations`` keeps as strings, and decorators), and the spans of binary operations: cosmic-ray also
    "mutates" a signature's bare ``*`` marker and ``X | None`` in annotations, mutants that cannot change
    behaviour."""
    tree = ast.parse(path.read_text())
    span = lambda n: ((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset))
    dead, binops = [], []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = n.args.posonlyargs + n.args.args + n.args.kwonlyargs + [n.args.vararg, n.args.kwarg]
            dead += [span(a.annotation) for a in args if a is not None and a.annotation is not None]
            dead += [span(x) for x in ([n.returns] if n.returns else []) + n.decorator_list]
        elif isinstance(n, ast.ClassDef):
            dead += [span(x) for x in n.decorator_list]
        elif isinstance(n, ast.AnnAssign):
            dead.append(span(n.annotation))
        elif isinstance(n, (ast.BinOp, ast.AugAssign)):
            binops.append(span(n))
    return dead, binops


def skip_mutants(db_path: Path, module_path: Path, functions: list[str] | None) -> None:
    """Mark as skipped the pending mutants outside ``functions`` (when given) or in code that never runs."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    ranges = function_lines(module_path, functions) if functions else None
    dead, binops = not_code(module_path)
    inside = lambda pos, spans: any(lo <= pos <= hi for lo, hi in spans)
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            m = item.mutations[0]
            pos = tuple(m.start_pos)
            if ranges is not None and not any(lo <= pos[0] <= hi for lo, hi in ranges):
                why = "outside the functions in scope"
            elif inside(pos, dead):
                why = "annotation or decorator"
            elif m.operator_name.startswith("core/ReplaceBinaryOperator") and not inside(pos, binops):
                why = "not a binary operation (a signature's * marker)"
            else:
                continue
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=why))


def sample(db_path: Path, share: float, seed: int = 0) -> None:
    """Keep a seeded random ``share`` of the pending mutants (mutant sampling: an unbiased estimate of the
    score when a full run does not fit the time), mark the others as skipped."""
    import random

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    rng = random.Random(seed)
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        for item in sorted(db.pending_work_items, key=lambda item: item.job_id):
            if rng.random() >= share:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not sampled"))


def not_reached(db_path: Path) -> int:
    """Mark the mutants a time-limited run did not reach as skipped. cosmic-ray runs the pending mutants in the
    order of their random job ids, so the ones it reached are still a uniform random sample."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(db_path), WorkDB.Mode.open) as db:
        pending = list(db.pending_work_items)
        for item in pending:
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not reached"))
    return len(pending)


def run_for(argv: list[str], minutes: float | None, **kwargs) -> bool:
    """Run ``argv`` in its own process group; stop the whole group after ``minutes``. False when stopped."""
    proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
    try:
        if proc.wait(timeout=None if minutes is None else minutes * 60):
            raise subprocess.CalledProcessError(proc.returncode, argv)
        return True
    except subprocess.TimeoutExpired:
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def forget_survivors(db_path: Path) -> list[str]:
    """Drop the survivors' results so that ``cosmic-ray exec`` tests them again (against newer tests)."""
    import sqlite3

    with sqlite3.connect(db_path) as con:
        jobs = [j for (j,) in con.execute("select job_id from work_results where test_outcome = 'SURVIVED'")]
        con.executemany("delete from work_results where job_id = ?", [(j,) for j in jobs])
    return jobs


def killed_by(db_path: Path, jobs: list[str]) -> list[str]:
    """For each of ``jobs``: its mutation and the first failing test now (or 'still survives')."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    lines = []
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if item.job_id not in jobs:
                continue
            m = item.mutations[0]
            failed = re.search(r"^(?:FAILED|ERROR) (\S+)", result.output or "", re.M)
            verdict = "still survives" if result.test_outcome == TestOutcome.SURVIVED else \
                f"killed by {failed.group(1) if failed else 'the tests (' + (result.output or '')[:40] + ')'}"
            lines.append(f"- line {m.start_pos[0]} {m.operator_name} #{m.occurrence}: {verdict}")
    return lines


def summary(db_path: Path) -> tuple[dict, list[str]]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    counts = {"mutants": 0, "killed": 0, "survived": 0, "skipped": 0, "not reached": 0}
    survivors = []
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                counts["skipped"] += 1
                counts["not reached"] += result.output == "not reached"
                continue
            counts["mutants"] += 1
            if result.test_outcome == TestOutcome.SURVIVED:
                counts["survived"] += 1
                m = item.mutations[0]
                diff = "\n".join(l for l in (result.diff or "").splitlines()
                                 if l[:1] in "+-" and not l.startswith(("+++", "---")))
                survivors.append(f"line {m.start_pos[0]} {m.operator_name} #{m.occurrence}\n{diff}")
            else:
                counts["killed"] += 1
    return counts, survivors


def pytest_command(module: dict, python: str) -> list[str]:
    return [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "-o", "addopts=", *module["tests"]]


def run_tests(argv: list[str], timeout: float, **kwargs) -> tuple[str, str]:
    """('passed' | 'failed' | 'timeout', the first failing test or the output's last line) of a test command."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, start_new_session=True,
                              **kwargs)
    except subprocess.TimeoutExpired:
        return "timeout", f"over {timeout:.0f} s"
    failed = re.search(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    return ("passed" if done.returncode == 0 else "failed"), (failed.group(1) if failed else tail)


def check_catalogue(entries: list[dict], config: dict) -> list[str]:
    """Problems of the catalogue's entries themselves (fields, unknown modules, duplicate ids)."""
    problems, seen = [], set()
    for e in entries:
        missing = [f for f in ("id", "module", "file", "old", "new", "definition", "source") if not e.get(f)]
        if missing:
            problems.append(f"{e.get('id', '?')}: missing {', '.join(missing)}")
        if e.get("module") not in config["modules"]:
            problems.append(f"{e.get('id', '?')}: unknown module {e.get('module')!r}")
        if e.get("id") in seen:
            problems.append(f"{e['id']}: id used twice")
        if e.get("old") == e.get("new"):
            problems.append(f"{e.get('id', '?')}: old and new are the same")
        seen.add(e.get("id"))
    return problems


def run_catalogue(args, config: dict, wt: Path, env: dict) -> tuple[list[str], list[str]]:
    """Apply each selected catalogue entry alone in the worktree ``wt`` and run its module's tests."""
    entries = tomllib.loads(CATALOGUE.read_text())["mutant"]
    problems = check_catalogue(entries, config)
    if problems:
        raise SystemExit("catalogue: " + "; ".join(problems))
    chosen = [e for e in entries if (not args.modules or e["module"] in args.modules)
              and (not args.only or e["id"] in args.only)]
    report = ["| id | module | definition | outcome | by |", "|---|---|---|---|---|"]
    counts = {"killed": 0, "survived": 0, "stale": 0}
    baseline: dict[str, tuple[str, str]] = {}
    for e in chosen:
        module = config["modules"][e["module"]]
        timeout = float(module.get("timeout", 120))
        if e["module"] not in baseline:
            baseline[e["module"]] = run_tests(pytest_command(module, sys.executable), 4 * timeout, cwd=wt, env=env)
            if baseline[e["module"]][0] != "passed":
                print(f"{e['module']}: the tests fail on the unmutated code ({baseline[e['module']][1]})", flush=True)
        path = wt / e["file"]
        source = path.read_text()
        if baseline[e["module"]][0] != "passed":
            outcome, by = "not run", "the tests fail unmutated"
        elif source.count(e["old"]) != 1:
            outcome, by = "stale", f"old text found {source.count(e['old'])} times"
        else:
            path.write_text(source.replace(e["old"], e["new"]))
            try:
                outcome, by = run_tests(pytest_command(module, sys.executable), timeout, cwd=wt, env=env)
            finally:
                path.write_text(source)
            outcome = "survived" if outcome == "passed" else "killed"
        counts[outcome] = counts.get(outcome, 0) + 1
        report.append(f"| {e['id']} | {e['module']} | {e['definition']} | {outcome} | {by} |")
        print(report[-1], flush=True)
    scored = counts["killed"] + counts["survived"]
    head = [f"Catalogue mutants of {args.rev}: {len(chosen)} entries, {counts['killed']} killed, "
            f"{counts['survived']} survived, {counts['stale']} stale"
            + (f" ({counts['killed'] / scored:.0%} of those applied killed)" if scored else ""), ""]
    return head, report


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # killed: still remove the worktree
    config = tomllib.loads(CONFIG.read_text())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"keys of {CONFIG.relative_to(REPO)} (default: all)")
    parser.add_argument("--rev", default="HEAD", help="the commit to mutate (default HEAD)")
    parser.add_argument("--sample", type=float, help="test a seeded random share of the mutants (default: the "
                        "module's `sample` in the config, else all)")
    parser.add_argument("--minutes", type=float, help="stop each module's mutants after this long; those not "
                        "reached are left out (the ones run stay a random sample) and the report says how many")
    parser.add_argument("--retest", metavar="DIR", help="a previous run's folder (printed at its end): test its "
                        "survivors again, on REV's tests (the modules' source must be unchanged)")
    parser.add_argument("--catalogue", action="store_true", help=f"run the semantic mutants of "
                        f"{CATALOGUE.relative_to(REPO)} (of the MODULEs given, else all) instead of cosmic-ray's")
    parser.add_argument("--only", nargs="+", metavar="ID", help="with --catalogue: only these entries")
    parser.add_argument("--out", default="mutation-report.md", help="the report (markdown)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in config["modules"]]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; choose from {', '.join(config['modules'])}")
    names = args.modules or list(config["modules"])

    root = Path(args.retest) if args.retest else Path(tempfile.mkdtemp(prefix="lexprobe-mutation-"))
    wt = root / "wt"
    for link in (root / "shared", root / "path" / "lexprobe"):
        link.unlink(missing_ok=True)
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(wt), args.rev], check=True)
    (root / "shared").symlink_to((REPO.parent / "shared").resolve())
    (root / "path").mkdir(exist_ok=True)
    (root / "path" / "lexprobe").symlink_to(wt / "engine")
    env = {**os.environ, "PYTHONPATH": str(root / "path"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    cr = str(Path(sys.executable).with_name("cosmic-ray"))
    head = subprocess.run(["git", "-C", str(wt), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if args.catalogue:
        report, details = [], []
        try:
            report, details = run_catalogue(args, config, wt, env)
            report[0] = report[0].replace(":", f" ({head.stdout.strip()}):", 1)
        finally:
            subprocess.run(["git", "-C", str(wt), "checkout", "--", "."], check=False)
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(wt)], check=False)
            Path(args.out).write_text("\n".join(report + details) + "\n")
        print("\n".join(report))
        print(f"report: {args.out}")
        return 0
    report = [f"Mutants of {args.rev} ({head.stdout.strip()}):", "",
              "| module | sampled | mutants | killed | survived | score |", "|---|---|---|---|---|---|"]
    details = []
    try:
        for name in names:
            module = config["modules"][name]
            share = args.sample if args.sample is not None else module.get("sample", 1.0)
            cfg, db, orig = root / f"{name}.toml", root / f"{name}.sqlite", root / f"{name}.py.orig"
            source = (wt / module["path"]).read_text()
            cfg.write_text(cosmic_ray_config(module, config["operators"]["exclude"], sys.executable))
            retested = []
            if args.retest:
                if not db.exists() or (orig.exists() and orig.read_text() != source):
                    print(f"{name}: no session in {root}, or {module['path']} changed since: not retested")
                    continue
                retested = forget_survivors(db)
            else:
                orig.write_text(source)
                subprocess.run([cr, "init", str(cfg), str(db)], cwd=wt, env=env, check=True)
                subprocess.run([str(Path(sys.executable).with_name("cr-filter-operators")), str(db), str(cfg)],
                               cwd=wt, env=env, check=True)
                skip_mutants(db, wt / module["path"], module.get("functions"))
                if share < 1:
                    sample(db, share)
            if subprocess.run([cr, "baseline", str(cfg)], cwd=wt, env=env).returncode != 0:
                report.append(f"| {name} | the tests fail on the unmutated code: not run | | | | |")
                print(report[-1], flush=True)
                continue
            stopped = not run_for([cr, "exec", str(cfg), str(db)], args.minutes, cwd=wt, env=env)
            if stopped:
                subprocess.run(["git", "-C", str(wt), "checkout", "--", "."], check=True)  # the last mutant
                print(f"{name}: stopped after {args.minutes} minutes, {not_reached(db)} mutants not reached")
            c, survivors = summary(db)
            score = f"{c['killed'] / c['mutants']:.0%}" if c["mutants"] else "-"
            late = f" ({c['not reached']} not reached in time)" if c["not reached"] else ""
            report.append(f"| {name} | {share:.0%}{late} | {c['mutants']} | {c['killed']} | {c['survived']} | {score} |")
            details.append(f"\n### {name}: survivors\n\n```diff\n" + "\n\n".join(survivors) + "\n```\n")
            if retested:
                details.append(f"\n### {name}: earlier survivors tested again\n\n" + "\n".join(killed_by(db, retested))
                               + "\n")
            print(report[-1], flush=True)
    finally:
        subprocess.run(["git", "-C", str(wt), "checkout", "--", "."], check=False)
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(wt)], check=False)
        Path(args.out).write_text("\n".join(report) + "\n" + "".join(details))
    print("\n".join(report))
    print(f"survivors: {args.out}; sessions kept in {root} (for --retest)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
