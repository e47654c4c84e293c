"""The web dashboard (`egym serve`): runs, tasks, rollouts and training curves over the run store, read-only.

Nothing is imported here: the app lives in gym.dashboard.app (Starlette is an optional dependency, `[serve]`).
"""
