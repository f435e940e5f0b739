"""Benchmark: Attentive Mimicking training, batched (every context's v_C computed once, padded instance x
context tensors) against the authors' instance-at-a-time batch building (each context's words looked up one by one
into a padded instance x context x word x d tensor), the same instances, model and optimiser in the same run, one
torch thread both ways; their losses over the shared batches must agree. Also the contexts index build in
tokens/s."""

from __future__ import annotations

from ..core.store import home_path
from ..runs.bench_record import record


def run_am_bench(*, home=None, targets: str = "glove", corpus: str = "semcor", preset_name: str = "am",
                 batches: int = 100, min_count: int = 1, max_sentences: int | None = None, seed: int = 0,
                 contexts_name: str = "bench-am-contexts", record_path: str | None = None) -> dict:
    """Build the contexts index ``contexts_name`` of ``corpus`` (replaced), then train AM on it mimicking the
    words index ``targets`` (words of at least ``min_count`` occurrences; the authors: 100): ``batches`` batches
    of one epoch each way. Returns ``speedup`` (training steps,
    instances/s) and the markdown."""
    import torch

    from ..kinds.contexts import ContextIndex, build_contexts_index
    from ..kinds.words import WordIndex
    from .am_targets import index_targets
    from .mimicking import ContextData, preset, train

    home = home_path(home)
    built = build_contexts_index(contexts_name, corpus, home=home, seed=seed, max_sentences=max_sentences,
                                 replace=True)
    table = index_targets(WordIndex.open(targets, home=home))
    data = ContextData.from_index(ContextIndex.open(contexts_name, home=home))
    config = preset(preset_name, epochs=1, seed=seed, min_count=min_count)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # both ways, and so in the record's machine line
    try:
        train(table, data, config, max_batches=2)  # warm-up: torch's optimiser imports, caches
        _, fast = train(table, data, config, max_batches=batches)
        _, slow = train(table, data, config, max_batches=batches, reference=True)
        return _recorded(fast, slow, built, table, config, record_path,
                         f"words index {targets} ({len(table.words)} x {table.dim}); contexts: {corpus}"
                         f"{f' (first {max_sentences} sentences)' if max_sentences else ''}")
    finally:
        torch.set_num_threads(threads)


def _recorded(fast, slow, built: dict, table, config, record_path, what: str) -> dict:
    loop_fast = fast.seconds - fast.setup_seconds
    loop_slow = slow.seconds - slow.setup_seconds
    rate_fast, rate_slow = fast.instances[0] / loop_fast, slow.instances[0] / loop_slow
    rel = abs(fast.losses[0] - slow.losses[0]) / max(abs(slow.losses[0]), 1e-12)
    rows = [{"method": "lexprobe: batched (v_C once, padded tensors)", "instances": fast.instances[0],
             "setup_s": fast.setup_seconds, "train_s": loop_fast, "train_cpu_s": fast.loop_cpu_seconds,
             "instances_per_s": rate_fast, "mean_loss": fast.losses[0]},
            {"method": "instance at a time (the authors' batch builder)", "instances": slow.instances[0],
             "setup_s": slow.setup_seconds, "train_s": loop_slow, "train_cpu_s": slow.loop_cpu_seconds,
             "instances_per_s": rate_slow, "mean_loss": slow.losses[0]}]
    notes = [f"targets: {what}: {built['windows']} windows of {built['words']} words; AM preset {config.preset}, "
             f"batch {config.batch_size}, {-(-fast.instances[0] // config.batch_size)} batches each way, seed "
             f"{config.seed}, 1 torch thread; {fast.words} training words (min count {config.min_count})",
             f"training speed-up (instances/s over the same batches): **{rate_fast / rate_slow:.1f}x**; "
             f"(CPU time: **{slow.loop_cpu_seconds / max(fast.loop_cpu_seconds, 1e-9):.1f}x**); "
             f"setup (context vectors, n-grams; the baseline also reads its windows as text) "
             f"{fast.setup_seconds:.1f} s vs {slow.setup_seconds:.1f} s",
             f"mean loss over the shared batches: relative difference **{rel:.1e}** (same instances, same model)",
             f"contexts index build: {built['tokens']} tokens at **{built['tokens_per_s']:.0f} tokens/s** (windows "
             f"collected; {built['seconds']} s in all with the corpus read and the shards written)"]
    md = record(record_path, "bench am: batched AM training vs instance at a time; contexts index build", rows,
                notes=notes)
    return {"speedup": rate_fast / rate_slow, "max_rel_loss_diff": rel, "tokens_per_s": built["tokens_per_s"],
            "markdown": md}
