"""A Dask worker plugin: each worker process sets up the numba kernel cache as the client did
(`wasp.kernelcache.setup` with the client's packages) before it runs a task, so kernels that
run inside a worker (datagen's in-process searches) load from a cache keyed to the worker's own
sources; engines the worker starts inherit it."""

from distributed.diagnostics.plugin import WorkerPlugin


class KernelCache(WorkerPlugin):
    """`wasp.kernelcache.setup(packages)` on every worker, those that join later included."""

    name = "wasp-kernel-cache"

    def __init__(self, packages):
        self.packages = tuple(packages)

    def setup(self, worker) -> None:
        from wasp import kernelcache

        kernelcache.setup(self.packages)
