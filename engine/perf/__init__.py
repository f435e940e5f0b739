"""Speed benchmarks: each compares lexprobe against a named baseline in the same process."""
