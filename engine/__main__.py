"""``python -m engine`` runs the lexprobe CLI."""

from .cli import main

main()
