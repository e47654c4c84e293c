"""Rollout sources: what turns tasks and the current policy into groups of scored samples."""
