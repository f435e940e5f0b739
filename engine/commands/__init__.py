"""CLI command modules, one per family; each adds its commands to the groups in :mod:`engine.cli`."""
