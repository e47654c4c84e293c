"""The grader: rubric files, built-in checks, the LLM judge, and scoring into a Grade.

It reads state only through a Probe (grader.probe) and never drives the runtime:
starting sandboxes, sealing them and choosing the judge belong to
gym.episode, which calls in here. Entry points:
- `grader.score.grade_async(rubric, probe, trajectory, judge=..., initial=...)`: grade a final state.
- `grader.loader.load_rubric(path)`, `grader.lint.lint_rubric(path, report)`.
"""
