"""Chat checks over the workspace snapshot. Channels by name; direct messages as `dm:alice,bob`.

The initial chat history is in the snapshot too: to check what the agent posted, pass
`user` (the agent's username), or the initial noise may satisfy the check.
"""

from __future__ import annotations

import datetime as dt

from grader.chatstate import ChatPost, ChatSnapshot
from grader.checks.base import CheckContext, CheckResult, brief, matches_agent_text, text_matches

__all__ = [
    "message_exists",
    "message_absent",
    "reaction_exists",
    "channel_exists",
    "channel_member",
    "people_messaged",
]


def _find(
    snap: ChatSnapshot,
    *,
    channel: str | None,
    text: str | None,
    regex: str | None,
    user: str | None,
    thread: str | None,
    case_sensitive: bool,
    after: str | int | None = None,
) -> list[ChatPost]:
    """Posts matching every given filter. `thread`: a substring of the thread's root post."""
    posts = snap.posts_in(channel)
    if after is not None:
        since = millis(after)
        posts = [p for p in posts if p.create_at > since]
    if user is not None:
        posts = [p for p in posts if p.user == user.lstrip("@")]
    if text is not None or regex is not None:
        posts = [
            p for p in posts if text_matches(p.message, text=text, regex=regex, case_sensitive=case_sensitive)
        ]
    if thread is not None:
        roots = {
            p.id for p in snap.posts_in(channel) if not p.root_id and text_matches(p.message, text=thread)
        }
        posts = [p for p in posts if p.root_id in roots]
    return posts


def millis(when: str | int) -> int:
    """Epoch milliseconds from an int or an ISO 8601 time (UTC when it has no offset)."""
    if isinstance(when, int):
        return when
    parsed = dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
    return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp() * 1000)


def _where(channel: str | None, user: str | None, thread: str | None) -> str:
    parts = [
        f"in {channel}" if channel else "anywhere",
        f"by {user}" if user else "",
        f"in thread {brief(thread, 40)!r}" if thread else "",
    ]
    return " ".join(p for p in parts if p)


@matches_agent_text
def message_exists(
    ctx: CheckContext,
    *,
    channel: str | None = None,
    text: str | None = None,
    regex: str | None = None,
    user: str | None = None,
    thread: str | None = None,
    case_sensitive: bool = False,
    min_count: int = 1,
    after: str | int | None = None,
) -> CheckResult:
    """Pass when at least `min_count` posts match (channel/DM, text and/or regex, author, thread, posted after)."""
    snap = ctx.probe.chat()
    if channel is not None and snap.channel(channel) is None:
        return CheckResult(False, f"no channel {channel!r}")
    found = _find(
        snap,
        channel=channel,
        text=text,
        regex=regex,
        user=user,
        thread=thread,
        case_sensitive=case_sensitive,
        after=after,
    )
    where = _where(channel, user, thread)
    if len(found) >= min_count:
        return CheckResult(True, f"{len(found)} matching post(s) {where}: {brief(found[-1].message)}")
    return CheckResult(False, f"{len(found)} matching post(s) {where}; wanted {min_count}")


def message_absent(
    ctx: CheckContext,
    *,
    channel: str | None = None,
    text: str | None = None,
    regex: str | None = None,
    user: str | None = None,
    thread: str | None = None,
    case_sensitive: bool = False,
    after: str | int | None = None,
) -> CheckResult:
    """Pass when no post matches (e.g. salary figures never reach a public channel)."""
    snap = ctx.probe.chat()
    found = _find(
        snap,
        channel=channel,
        text=text,
        regex=regex,
        user=user,
        thread=thread,
        case_sensitive=case_sensitive,
        after=after,
    )
    if not found:
        return CheckResult(True, f"no matching post {_where(channel, user, thread)}")
    return CheckResult(
        False,
        f"{len(found)} matching post(s), e.g. by {found[0].user} in {found[0].channel}: {brief(found[0].message)}",
    )


def reaction_exists(
    ctx: CheckContext,
    *,
    emoji: str,
    channel: str | None = None,
    text: str | None = None,
    regex: str | None = None,
    user: str | None = None,
    author: str | None = None,
) -> CheckResult:
    """Pass when a post (filtered by channel, its text, its `author`) carries `emoji`, from `user` if given."""
    snap = ctx.probe.chat()
    posts = snap.posts_in(channel)
    if author is not None:
        posts = [p for p in posts if p.user == author.lstrip("@")]
    if text is not None or regex is not None:
        posts = [p for p in posts if text_matches(p.message, text=text, regex=regex)]
    emoji = emoji.strip(":")
    for post in posts:
        for reaction in post.reactions:
            if reaction.emoji.strip(":") == emoji and (user is None or reaction.user == user.lstrip("@")):
                return CheckResult(True, f":{emoji}: by {reaction.user} on {brief(post.message, 80)!r}")
    return CheckResult(
        False, f"no :{emoji}: reaction{' by ' + user if user else ''} on {len(posts)} candidate post(s)"
    )


def channel_exists(
    ctx: CheckContext,
    *,
    name: str,
    private: bool | None = None,
    purpose: str | None = None,
    header: str | None = None,
) -> CheckResult:
    """Pass when the channel exists (and is private/public, and its purpose/header contain the given text)."""
    found = ctx.probe.chat().channel(name)
    if found is None:
        return CheckResult(False, f"no channel {name!r}")
    problems = []
    if private is not None and (found.type == "P") != private:
        problems.append(f"type is {found.type}")
    if purpose is not None and not text_matches(found.purpose, text=purpose):
        problems.append(f"purpose is {brief(found.purpose, 60)!r}")
    if header is not None and not text_matches(found.header, text=header):
        problems.append(f"header is {brief(found.header, 60)!r}")
    return CheckResult(not problems, "; ".join(problems) or f"channel {name!r} ({found.type}) exists")


def channel_member(ctx: CheckContext, *, channel: str, user: str) -> CheckResult:
    """Pass when `user` is a member of `channel`."""
    found = ctx.probe.chat().channel(channel)
    if found is None:
        return CheckResult(False, f"no channel {channel!r}")
    ok = user.lstrip("@") in found.members
    return CheckResult(
        ok, f"{user} is {'a' if ok else 'not a'} member of {channel} ({len(found.members)} members)"
    )


def people_messaged(
    ctx: CheckContext, *, user: str, at_most: int, after: str | int | None = None
) -> CheckResult:
    """Pass when `user`'s direct and group messages (posted after `after`) reached at most `at_most`
    other people: asking everyone is not asking the right person."""
    user = user.lstrip("@")
    posts = _find(
        ctx.probe.chat(),
        channel=None,
        text=None,
        regex=None,
        user=user,
        thread=None,
        case_sensitive=False,
        after=after,
    )
    people = sorted(
        {name for p in posts if p.channel.startswith("dm:") for name in p.channel[3:].split(",")} - {user}
    )
    shown = ", ".join(people[:8]) + (" ..." if len(people) > 8 else "")
    return CheckResult(
        len(people) <= at_most,
        f"{user} messaged {len(people)} people directly ({shown or 'none'}); at most {at_most} wanted",
    )
