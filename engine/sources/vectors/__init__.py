"""Static vector readers, one module per format family: word2vec binary and text, GloVe text, fastText ``.vec``
and ``.bin`` (both layouts, the old one without a magic number included, with the character n-gram vectors that
give unseen words a vector), ``.npy`` + vocabulary, the packaged GloVe (``glove-6b-50d``), a transformer's input-embedding
matrix (``hf:<model>``) and gensim ``KeyedVectors`` files (``.kv``, ``.model``, through gensim: the ``gensim``
extra). Files compressed with gzip, bzip2 or xz (``.gz``, ``.bz2``, ``.xz``, recognised by their first bytes) are
read as they are downloaded. :func:`write_word2vec` writes vectors back as word2vec text or binary.

Every reader yields ``(words, matrix)`` chunks in file order (file order = frequency order for the usual
releases) and checks what it reads: a malformed line, a wrong dimension, NaN/inf values, non-UTF-8 bytes or
a truncated file raise :class:`InputError` naming the file and line (or entry). :func:`read_vectors` applies
the options shared by all formats: lowercasing, the duplicate policy (first wins, counted) and ``limit``.

Reading is bounded: a compressed file decompresses to at most ``$LEXPROBE_MAX_DECOMPRESSED`` bytes and a text
line is at most ``$LEXPROBE_MAX_LINE`` bytes (:data:`LIMITS`: defaults well above real releases); counts in a
header are checked against the file's size before anything is allocated; a compressed stream that ends early or
is followed by anything but another stream is refused alike for gzip, bzip2 and xz; only regular files are
opened. A pickle runs code when it is loaded, so one is opened only when the user names it: a ``.kv``/``.model``
file or ``--format gensim``, never because of its first bytes (open only pickles you trust).
"""

from .checks import CHUNK_ROWS, first_overflowing_row
from .detection import detect, detect_format
from .dispatch import (FORMAT_NAMES, FORMATS, PACKAGED_GLOVE, VectorSource, open_vectors, packaged_glove_paths,
                       read_vectors)
from .fasttext_bin import FastTextBin, ngram_buckets, read_fasttext_bin
from .streams import BOM, LIMITS, compression_name, env_limit, open_binary, read_limit, regular_file
from .word2vec_writer import write_word2vec

__all__ = ["BOM", "CHUNK_ROWS", "FORMATS", "FORMAT_NAMES", "LIMITS", "PACKAGED_GLOVE", "FastTextBin", "VectorSource",
           "compression_name", "detect", "detect_format", "env_limit", "first_overflowing_row", "ngram_buckets",
           "open_binary", "open_vectors", "packaged_glove_paths", "read_fasttext_bin", "read_limit", "read_vectors",
           "regular_file", "write_word2vec"]
