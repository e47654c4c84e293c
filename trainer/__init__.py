"""GRPO training on rubric scores: groups of rollouts -> advantages -> clipped policy-gradient updates.

Entry points: `egym train CONFIG.yaml key=value...` (gym.cli.training) and
`trainer.local.build_trainer(config).run()`. Nothing heavy is imported here.
"""
