"""``python -m lexprobe`` runs the lexprobe CLI."""

from .cli import main

main()
