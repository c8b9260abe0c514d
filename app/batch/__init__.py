"""Jobs over many files, without Qt: ``jobs`` (finding the files, a job's decode,
paint and write, the fsynced journal), ``pipeline`` (the local run: decode, paint and
write overlapped), ``workers`` (the process pool and its forkserver), ``cluster``
(Dask), ``memory`` (the memory budget), ``features`` (the log-mel dataset)."""
