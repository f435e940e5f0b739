"""Rare words (Schick, Schütze): one-token approximation, WNLaMPro probing of masked and causal LMs, Attentive Mimicking; its run and its benchmarks."""
