"""Running many programs on a Dask cluster, or a LocalCluster on this machine: one engine for every command.

``velhanet-league`` plays its games here and ``velhanet-grade`` checks its
submissions here: the same worker version check (``workers.checkWorkers``),
the same content-addressed archives (``archive``), and the same pool of tasks
(``pool.TaskPool``): a bounded number in flight, each result handed back once,
a task whose worker died given to another worker by the scheduler, and a run
with no worker left stopped with a reason.
"""
