"""Many rollouts: a resumable batch runner over a pluggable executor (asyncio here, Ray on a cluster)."""

from gym.batch.runner import BatchRequest, BatchResult, default_run_id, run_batch

__all__ = ["BatchRequest", "BatchResult", "default_run_id", "run_batch"]
