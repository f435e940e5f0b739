"""What runs the papers together: the main job (every paper's run into one report) and the benchmark suite, plus the index kinds' own benchmarks."""
