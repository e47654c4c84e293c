"""The facts every Acme family draws from: the world acmegen generates (the same one tasks/acme/initial_state holds)."""

from generate import build_world


def world_data():
    return build_world()
