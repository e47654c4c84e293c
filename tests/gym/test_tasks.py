"""gym/tasks.py: a world is parsed once per process and content of its world.yaml."""

from __future__ import annotations

import pydantic
import pytest
import yaml

from core.errors import TaskError
from gym.tasks import load_world

WORLD = {
    "name": "northwind",
    "company": "Northwind Traders",
    "date": "2025-04-07",
    "agent": {
        "name": "Sam Doe",
        "title": "Analyst",
        "email": "sam@northwind.example",
        "chat_username": "sam",
    },
}


@pytest.fixture
def world_dir(tmp_path):
    folder = tmp_path / "northwind"
    folder.mkdir()
    (folder / "world.yaml").write_text(yaml.safe_dump(WORLD))
    return folder


def test_an_unchanged_world_is_parsed_once_and_shared(world_dir):
    first = load_world(world_dir)
    assert load_world(world_dir) is first
    assert load_world(world_dir).company == "Northwind Traders"
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        first.company = "Someone Else"  # shared by every caller, so nobody may change it


def test_an_edited_world_yaml_is_parsed_anew(world_dir):
    first = load_world(world_dir)
    # Same size and, on a coarse clock, the same mtime: only the content tells the versions apart.
    (world_dir / "world.yaml").write_text(yaml.safe_dump({**WORLD, "company": "Northwind Traderz"}))
    edited = load_world(world_dir)
    assert edited is not first and edited.company == "Northwind Traderz"
    assert first.company == "Northwind Traders"


def test_the_same_file_in_two_folders_gives_each_its_own_path(world_dir, tmp_path):
    other = tmp_path / "copy" / "northwind"
    other.mkdir(parents=True)
    (other / "world.yaml").write_bytes((world_dir / "world.yaml").read_bytes())
    assert load_world(world_dir).path == world_dir
    assert load_world(other).path == other


def test_a_broken_world_yaml_fails_every_time_until_it_is_fixed(world_dir):
    (world_dir / "world.yaml").write_text(yaml.safe_dump({**WORLD, "compnay": "typo"}))
    for _ in range(2):
        with pytest.raises(TaskError, match="compnay"):
            load_world(world_dir)
    (world_dir / "world.yaml").write_text(yaml.safe_dump(WORLD))
    assert load_world(world_dir).company == "Northwind Traders"
    (world_dir / "world.yaml").unlink()
    with pytest.raises(TaskError, match="file not found"):
        load_world(world_dir)
