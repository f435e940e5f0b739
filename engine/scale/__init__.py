"""Scale-out on Ray: token-index builds by a pool of encoder actors and sharded exact search, both equal to
the local run. A skin beside :mod:`lexprobe.cli` over the same kinds and analyses; nothing on the local path
imports this package (or Ray).

What the nodes share (the choice, and why):

- **The build needs only the object store.** The driver reads the corpus, cuts it into blocks of whole
  sentences and sends each block (words and target spans: text, small) to an encoder actor; the actor returns
  the block's vectors (numpy, through the object store) and the driver writes them, in block order, through
  the same :func:`lexprobe.kinds.tokens.write_token_index` as the local build: the same shards, the same row
  ids, the same temporary folder and atomic manifest swap under the same writer lock. Encoding is compute
  bound (about 130 sentences/s per 2-core worker here, 1.5 KB per target coming back), so the traffic to the
  driver stays small (about 1 MB/s per worker) and no node but the driver's writes the index home.
- **Sharded search needs the index home on a file system every node mounts at the same path** (NFS, Lustre,
  a cloud file store, or read-only copies at the same path). Each search actor memory-maps only its own
  group of shards, checks their checksums and the manifest's version id against the driver's, and answers
  from an exact flat index over them: the vectors never travel through the driver. Shipping them through the
  object store instead would make the driver read the whole index on every start, the very thing sharding is
  for avoiding.

Failures: encoder and search actors restart (``max_restarts``) and their calls are retried
(``max_task_retries``), so a worker that dies re-runs its block or query on a fresh process; a block whose
actor is gone for good goes to another actor. A driver killed at any point leaves the old index: nothing is
visible before the manifest swap, the writer lock dies with the process, and the next writer removes the
temporary folder.
"""
