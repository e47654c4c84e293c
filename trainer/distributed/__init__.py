"""Training on a Ray cluster: rollout workers, sampler servers and learners as actors (see docs/training.md)."""
