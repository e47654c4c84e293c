"""Samplers: the engines that generate rollouts (transformers on CPU, vLLM on GPU)."""
