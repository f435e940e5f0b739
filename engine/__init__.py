"""lexprobe: a vector-index retrieval engine for probing word embeddings."""

__version__ = "0.1.0"
