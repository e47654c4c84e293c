"""Chat checks against the real chat service in a sandbox (seeded through its API, read by the snapshot CLI)."""

from __future__ import annotations

import pytest

from grader.checks import chat
from grader.checks.base import CheckContext
from grader.probe import SandboxProbe

pytestmark = pytest.mark.docker

SEED = """
agent_user: dana
team: {name: acme, display_name: Acme}
users:
  - {username: dana, first_name: Dana, last_name: Lee, position: Finance Analyst}
  - {username: raj, first_name: Raj, last_name: Patel}
  - {username: ola, first_name: Ola}
channels:
  - {name: finance, type: P, purpose: Month-end close, header: "Close: 3rd business day", members: [dana, raj]}
  - {name: general, members: [dana, raj, ola]}
posts:
  - channel: finance
    user: raj
    create_at: 2025-03-04T09:15:00Z
    message: Can you check the Q1 accruals?
    reactions: [{user: dana, emoji: eyes}]
    replies:
      - {user: dana, create_at: 2025-03-04T09:20:00Z, message: "On it: INV-2 and INV-3 are open."}
  - {channel: general, user: ola, create_at: 2025-03-05T10:00:00Z, message: "Lunch at noon?"}
  - {channel: "dm:raj,dana", user: dana, create_at: 2025-03-05T11:00:00Z, message: Your claim EXP-7 is approved.}
"""


@pytest.fixture(scope="module")
def ctx(live_sandbox):
    probe = SandboxProbe(live_sandbox(apps=("db", "chat"), chat=SEED))
    yield CheckContext(probe)
    probe.close()


def test_the_snapshot_reads_the_real_service(ctx):
    snap = ctx.probe.chat()
    assert {"dana", "raj", "ola"} <= {u.username for u in snap.users}
    assert snap.channel("finance").members == ["dana", "raj"]
    assert snap.channel("dm:raj,dana").name == "dm:dana,raj"
    assert ctx.probe.chat() is snap  # taken once per probe


def test_message_exists_by_channel_text_regex_user_and_thread(ctx):
    assert chat.message_exists(ctx, channel="finance", text="inv-2").passed
    assert chat.message_exists(ctx, channel="#finance", user="dana", regex=r"INV-\d and INV-3").passed
    assert not chat.message_exists(ctx, channel="finance", user="raj", text="INV-2").passed
    assert not chat.message_exists(ctx, channel="general", text="INV-2").passed
    assert chat.message_exists(ctx, channel="finance", thread="Q1 accruals", user="dana").passed
    assert not chat.message_exists(ctx, channel="finance", thread="Lunch", user="dana").passed
    assert not chat.message_exists(ctx, channel="finance", text="INV", min_count=2).passed
    missing = chat.message_exists(ctx, channel="legal", text="x")
    assert not missing.passed and missing.evidence == "no channel 'legal'"


def test_direct_messages_in_either_spelling(ctx):
    assert chat.message_exists(ctx, channel="dm:raj,dana", text="EXP-7 is approved", user="dana").passed
    assert chat.message_exists(ctx, channel="dm:dana,raj", text="EXP-7").passed
    assert not chat.message_exists(ctx, channel="dm:dana,ola", text="EXP-7").passed


def test_only_posts_after_a_time(ctx):
    assert chat.message_exists(ctx, channel="finance", text="INV-2", after="2025-03-04T09:16:00Z").passed
    assert not chat.message_exists(ctx, channel="finance", text="INV-2", after="2025-03-04T09:30:00").passed
    assert chat.message_absent(ctx, regex="EXP-7", after=1741172400001).passed  # 11:00:00.001 on the 5th


def test_message_absent(ctx):
    assert chat.message_absent(ctx, channel="general", regex="salary|EXP-7").passed
    found = chat.message_absent(ctx, regex="EXP-7")
    assert not found.passed and "dm:dana,raj" in found.evidence


def test_reactions(ctx):
    assert chat.reaction_exists(ctx, channel="finance", emoji=":eyes:", user="dana", text="accruals").passed
    assert not chat.reaction_exists(ctx, channel="finance", emoji="eyes", user="raj").passed
    assert not chat.reaction_exists(ctx, channel="finance", emoji="white_check_mark").passed
    assert not chat.reaction_exists(ctx, channel="general", emoji="eyes").passed


def test_channels_and_members(ctx):
    assert chat.channel_exists(ctx, name="finance", private=True, purpose="month-end").passed
    assert chat.channel_exists(ctx, name="finance", header="3rd business").passed
    assert not chat.channel_exists(ctx, name="finance", private=False).passed
    assert not chat.channel_exists(ctx, name="onboarding").passed
    assert chat.channel_member(ctx, channel="general", user="@ola").passed
    assert not chat.channel_member(ctx, channel="finance", user="ola").passed


def test_people_messaged_counts_the_people_a_user_wrote_to_directly(ctx):
    assert chat.people_messaged(ctx, user="dana", at_most=1).passed
    too_many = chat.people_messaged(ctx, user="@dana", at_most=0)
    assert not too_many.passed and "(raj)" in too_many.evidence
    assert chat.people_messaged(ctx, user="ola", at_most=0).passed  # posted only in a channel
    assert chat.people_messaged(ctx, user="dana", at_most=0, after="2025-03-06T00:00:00Z").passed
