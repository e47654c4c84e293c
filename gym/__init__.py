"""enterprise-gym runtime: sandbox, harness, policies, rollouts, store, CLI.

Note: the PyPI package `gym` (OpenAI Gym) uses the same import name. Install
enterprise-gym in its own virtual environment (make setup does).
"""

__version__ = "0.1.0"
