"""`testing.workercache`: Dask workers set up the kernel cache as the client did, keyed to their
own sources, before they run a task (a LocalCluster of worker processes)."""

import os
import sys

import pytest

from testing.config import MatchConfig
from testing.engine import EngineConfig
from tests.conftest import root_on_pythonpath
from wasp import kernelcache

pytest.importorskip("distributed")


@pytest.mark.timeout(180)
def test_the_workers_of_a_dask_run_set_up_the_clients_kernel_cache(tmp_path, monkeypatch):
    from distributed import LocalCluster

    from testing.executor import DaskExecutor

    monkeypatch.delenv("NUMBA_CACHE_DIR")  # the workers inherit no cache directory
    monkeypatch.setenv("WASP_CACHE_DIR", str(tmp_path / "cache"))
    with root_on_pythonpath(), LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address=":0",
                                            silence_logs=40) as cluster:
        engines = [EngineConfig(cmd=sys.executable, name=n, nodes=1) for n in ("a", "b")]
        cfg = MatchConfig(engines=engines, games=2, dask=cluster.scheduler_address).validate()
        executor = DaskExecutor(cfg)
        try:
            seen = executor.client.run(lambda: (kernelcache.packages(),
                                                os.environ.get("NUMBA_CACHE_DIR")))
        finally:
            executor.close()
    key = kernelcache.key(kernelcache.file_digests(kernelcache.packages()))
    assert kernelcache.packages() == ("wasp", "tuner")  # tests/conftest.py set it up
    assert list(seen.values()) == [(("wasp", "tuner"), str(tmp_path / "cache" / key))]
