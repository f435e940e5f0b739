"""Scale-out on Ray: token-index builds by a pool of encoder actors and sharded exact search, both equal to
the local run. A skin beside :mod:`lexprobe.cli` over the same kinds and analyses; nothing on the local path
imports this package (or Ray).

What the nodes share (the choice, and why):

- **Builds write on a file system every node mounts at the same path** (NFS, Lustre, a cloud file store), the
  index home. The driver reads the corpus, cuts it into blocks of whole sentences and sends each block (text,
  small) to an encoder actor; the actor encodes it and writes the block's rows with their vectors into the
  new version's temporary folder (``blocks/``); Ray tasks cut those block files into the shards at the local
  build's boundaries, with the local build's row ids; the driver collects row counts and checksums, writes
  the sentences and streams the flat FAISS file from the shards one at a time, and commits the manifest with
  the usual atomic swap. No vector passes through the driver, so its memory does not grow with the vectors
  (it holds the corpus text, as every corpus reader does). The contexts index is built the same way
  (:mod:`lexprobe.scale.contexts_ray`): map tasks over corpus blocks write each block's bottom-k windows per
  word, reduce tasks over ranges of words merge them and write the shards.
- **Sharded search needs the index home on a file system every node mounts at the same path** (NFS, Lustre,
  a cloud file store, or read-only copies at the same path). Each search actor memory-maps only its own
  group of shards, checks their checksums and the manifest's version id against the driver's, and answers
  from an exact flat index over them: the vectors never travel through the driver. Shipping them through the
  object store instead would make the driver read the whole index on every start, the very thing sharding is
  for avoiding.

Failures: encoder and search actors restart (``max_restarts``) and their calls are retried
(``max_task_retries``), so a worker that dies re-runs its block or query on a fresh process; a block whose
actor is gone for good goes to another actor. Every file a worker writes goes under a private name first and
is renamed into place, so a worker killed mid-write leaves only a stray private file inside the hidden
temporary folder, which goes with it. A driver killed at any point leaves the old index: nothing is
visible before the manifest swap, the writer lock dies with the process, and the next writer removes the
temporary folder.
"""
