"""The version of lexprobe, recorded in run folders and manifests."""

__version__ = "0.1.0"
