"""``tools/gpu-check.sh``: the torch stages of the main job on the GPU against the CPU on the same inputs, for a
maintainer with a GPU. Where torch sees no GPU it prints one line and exits 0.

Checked (each with :mod:`lexprobe.suite.torch_compare`, the CPU first, then the GPU):

- ``encode`` (the senses stage's token index): MiniLM token vectors of SemCor sentences; every target's cosine
  between the two devices at least ``TOLERANCES[dtype]["encode_min_cosine"]``.
- ``ota`` (the OTA stage and OTA in probing): OTA of multi-token words on MiniLM, float32 on both devices, a fixed
  number of iterations; the words' mean cosine at least ``ota_mean_cosine`` (Adam's sign-like steps carry a
  rounding difference forward, so single coordinates may drift more than a forward pass does).
- ``probe <model>`` (the WNLaMPro stage): a WNLaMPro sample probed with SPLADE-tiny and SmolLM2; the same top-1
  answer for at least ``probe_top1`` of the queries (near-tied logits may swap under another summation order)
  and an MRR difference within ``probe_mrr``.

The float32 bounds allow the summation-order differences of two devices' float32 kernels (relative 1e-6 per
product, far inside them); the bfloat16 bounds (``--dtype bfloat16``: the GPU runs bfloat16 autocast, the CPU
float32) are those ``bench perf`` measures between bfloat16 and float32 on the CPU, with room. Speed ratios are
CPU seconds / GPU seconds on the same inputs after a warm-up. Exit code 1 when a check fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SKIP_LINE = "gpu-check: skipped: torch sees no GPU (no CUDA or MPS device), nothing to compare on this machine"
TOLERANCES = {
    "float32": {"encode_min_cosine": 0.9999, "ota_mean_cosine": 0.99, "probe_top1": 0.98, "probe_mrr": 0.01},
    "bfloat16": {"encode_min_cosine": 0.99, "ota_mean_cosine": 0.99, "probe_top1": 0.80, "probe_mrr": 0.03},
}
PROBE_MODELS = ("splade-tiny", "smollm2")


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tools/gpu-check.sh", description=(
        "The main job's torch stages (token encoding, OTA, WNLaMPro probing) on the GPU against the CPU on the "
        "same inputs: answers equal within stated tolerances, and the speed ratios. Skips with one line where "
        "torch sees no GPU."))
    p.add_argument("--device", default="auto", help="The GPU: auto (CUDA, else MPS), cuda, mps; 'cpu' compares "
                                                     "the CPU with itself (a self-test of this script).")
    p.add_argument("--dtype", default="float32", choices=sorted(TOLERANCES),
                   help="Inference dtype on the GPU (the CPU runs float32): float32 or bfloat16.")
    p.add_argument("--sentences", type=int, default=400, help="SemCor sentences encoded (default 400).")
    p.add_argument("--ota-words", type=int, default=32, help="Multi-token words approximated (default 32).")
    p.add_argument("--ota-iterations", type=int, default=100, help="OTA iterations (default 100).")
    p.add_argument("--entries", type=int, default=25, help="WNLaMPro entries per relation probed (default 25).")
    p.add_argument("--semcor", help="SemCor folder (default: the data home, else ../shared/data).")
    p.add_argument("--wnlampro", help="A WNLaMPro file to sample from (default: built from WordNet per model).")
    p.add_argument("--home", help="Index home (WordNet's cache; default: lexprobe's).")
    p.add_argument("--models", default=",".join(PROBE_MODELS), help="Probed models, comma-separated.")
    p.add_argument("--seed", type=int, default=0, help="Seed of every sample (default 0).")
    p.add_argument("--record", help="Also append the table to this markdown file (e.g. benchmarks/gpu.md).")
    return p.parse_args(argv)


def _semcor(path: str | None) -> Path | None:
    if path:
        return Path(path)
    from .main_job import locate_data

    return locate_data(None)[0].get("semcor")


def _entries(args, model: str) -> list:
    from ..rare_words.probing import select

    if args.wnlampro:
        from ..sources.datasets.wnlampro import read_dataset

        every = read_dataset(args.wnlampro)
    else:
        from ..rare_words.wnlampro_build import build_wnlampro

        every = build_wnlampro(model, seed=args.seed, home=args.home)
    return select(every, limit=args.entries, seed=args.seed)


def run_checks(args, gpu: str) -> list[dict]:
    """One row per check: what, CPU and GPU seconds, the speed ratio, the agreement, its bound, pass or fail."""
    from ..core.errors import LexprobeError
    from . import torch_compare as tc

    limits = TOLERANCES[args.dtype]
    cpu, dev = {"device": "cpu", "dtype": "float32"}, {"device": gpu, "dtype": args.dtype}
    rows = []

    def add(check, result, measure, value, bound, ok):
        rows.append({"check": check, "cpu_s": result["first_seconds"], "gpu_s": result["second_seconds"],
                     "speed_ratio": result["speedup"], "measure": measure, "value": value, "bound": bound,
                     "pass": bool(ok)})

    semcor = _semcor(args.semcor)
    if semcor is None:
        rows.append({"check": "encode minilm", "measure": "skipped: SemCor not found (lexprobe data fetch semcor)",
                     "pass": True})
    else:
        from ..sources.datasets.corpora import read_corpus
        from .bench_encode import sample_sentences

        sentences, spans = sample_sentences(read_corpus(f"wsd:{semcor}"), args.sentences, args.seed)
        r = tc.compare_encoding("minilm", sentences, spans, cpu, dev)
        add("encode minilm", r, "min cosine", r["min_cosine"], f">= {limits['encode_min_cosine']}",
            r["min_cosine"] >= limits["encode_min_cosine"])
    try:
        from ..rare_words.bench_ota import multi_token_words
        from ..sources.models import load_tokenizer

        words = multi_token_words(load_tokenizer("minilm"), args.ota_words, args.seed)
        r = tc.compare_ota("minilm", words, cpu, {"device": gpu}, iterations=args.ota_iterations, seed=args.seed)
        add("ota minilm (float32)", r, "mean cosine", r["mean_cosine"], f">= {limits['ota_mean_cosine']}",
            r["mean_cosine"] >= limits["ota_mean_cosine"])
    except LexprobeError as exc:
        rows.append({"check": "ota minilm", "measure": f"skipped: {exc}", "pass": True})
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        r = tc.compare_probing(model, _entries(args, model), cpu, dev, seed=args.seed)
        ok = r["top1_agreement"] >= limits["probe_top1"] and abs(r["mrr_difference"]) <= limits["probe_mrr"]
        add(f"probe {model}", r, "top-1 agreement; MRR difference [95% CI]",
            f"{r['top1_agreement']:.3f}; {r['mrr_difference']:+.4f} [{r['mrr_low']:+.4f}, {r['mrr_high']:+.4f}]",
            f">= {limits['probe_top1']}; |d| <= {limits['probe_mrr']}", ok)
    return rows


def main(argv=None) -> int:
    args = parse(argv)
    from ..core.errors import LexprobeError
    from ..sources.models import resolve_device

    try:
        gpu = resolve_device(args.device)
        if gpu.type == "cpu" and args.device != "cpu":
            print(SKIP_LINE)
            return 0
        from ..runs.bench_record import record

        rows = run_checks(args, str(gpu))
    except LexprobeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import torch

    name = torch.cuda.get_device_name(gpu) if gpu.type == "cuda" else gpu.type
    failed = [r["check"] for r in rows if not r["pass"]]
    notes = [f"device {name} against the CPU ({torch.get_num_threads()} torch threads); GPU inference dtype "
             f"{args.dtype}; speed ratio = CPU seconds / GPU seconds on the same inputs, after a warm-up",
             f"samples: {args.sentences} SemCor sentences, {args.ota_words} OTA words x {args.ota_iterations} "
             f"iterations, {args.entries} WNLaMPro entries per relation, seed {args.seed}",
             "all checks pass" if not failed else f"FAILED: {', '.join(failed)}"]
    print(record(args.record, "gpu-check: the main job's torch stages, GPU against CPU", rows, notes=notes,
                 columns=["check", "cpu_s", "gpu_s", "speed_ratio", "measure", "value", "bound", "pass"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
