"""Training on a local Ray: rollout workers and two learners (gradients all-reduced over gloo).

The same config run in one process and on Ray must give the same metrics:
groups carry their own seeds, and the learners sum gradients computed with
batch-wide loss weights.
"""

from __future__ import annotations

import pytest
import ray  # the `ray` extra (with `test`, installed by `make test`): a missing Ray fails here rather than skipping
import torch

from tests.trainer.test_learning import TIME_KEYS, toy_config
from trainer.local import build_trainer


@pytest.fixture(scope="module")
def local_ray():
    ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, num_cpus=4, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_run_matches_local_run(tmp_path, local_ray):
    torch.set_num_threads(1)
    over = {"steps": 3, "checkpoint.interval": 0, "update.micro_batch_size": 16}
    local = build_trainer(toy_config(tmp_path / "local", **over)).run()
    ray_over = {
        **over,
        "ray.enabled": True,
        "ray.rollout_workers": 2,
        "ray.learners": 2,
        "ray.worker_cpus": 0.5,
        "ray.learner_cpus": 0.5,
    }
    distributed = build_trainer(toy_config(tmp_path / "ray", **ray_over)).run()
    assert (tmp_path / "ray/checkpoints/step-000003/model/model.safetensors").is_file()
    assert len(distributed) == 3
    for a, b in zip(local, distributed, strict=True):
        for key in a.keys() - TIME_KEYS:
            if isinstance(a[key], float):
                assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-6), key
            else:
                assert b[key] == a[key], key
