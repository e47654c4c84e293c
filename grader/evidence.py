"""Render a judge item's evidence specs into the text the judge reads.

Each source becomes a titled block; long sources keep their head and tail.
A source the state cannot provide (a missing document) is shown as such, so
the judge sees the absence; a source that cannot be read at all (ProbeError)
propagates and makes the item `error`.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from core.trajectory import Trajectory
from grader.checks.chat import millis
from grader.errors import StateError
from grader.probe import Probe
from grader.rubric import (
    ChannelEvidence,
    DocumentEvidence,
    Evidence,
    FileEvidence,
    FinalAnswerEvidence,
    SqlEvidence,
    TextEvidence,
    TranscriptEvidence,
)


def clip(text: str, limit: int) -> str:
    """Keep the head and the tail of long text, saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"


def _final_answer(spec: FinalAnswerEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    return "Final answer", (
        traj.final_answer if traj and traj.final_answer else "(the agent gave no final answer)"
    )


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M") if ms else "?"


def _channel(spec: ChannelEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    snap = probe.chat()
    posts = snap.posts_in(spec.channel)
    if spec.user:
        posts = [p for p in posts if p.user == spec.user.lstrip("@")]
    if spec.after is not None:
        since = millis(spec.after)
        posts = [p for p in posts if p.create_at > since]
    if spec.last:
        posts = posts[-spec.last :]
    lines = []
    for post in posts:
        reactions = (
            f"  [reactions: {', '.join(f':{r.emoji}: {r.user}' for r in post.reactions)}]"
            if post.reactions
            else ""
        )
        files = f"  [files: {', '.join(post.files)}]" if post.files else ""
        prefix = "  ↳ " if post.root_id else ""
        lines.append(f"{prefix}[{_when(post.create_at)}] @{post.user}: {post.message}{reactions}{files}")
    title = f"Chat {spec.channel}" + (f" (posts by @{spec.user})" if spec.user else "")
    exists = snap.channel(spec.channel) is not None
    return title, "\n".join(lines) or ("(no posts)" if exists else f"(there is no channel {spec.channel})")


def render_document(doc: dict[str, Any]) -> str:
    if "error" in doc:
        return f"(cannot read: {doc['error']})"
    if doc.get("kind") == "spreadsheet":
        out = []
        for sheet in doc.get("sheets") or []:
            out.append(f"## Sheet {sheet.get('name')}")
            for ref, cell in (sheet.get("cells") or {}).items():
                formula = f"  ({cell['formula']})" if cell.get("formula") else ""
                out.append(f"{ref}: {cell.get('text', cell.get('value'))}{formula}")
        return "\n".join(out)
    out = []
    for para in doc.get("paragraphs") or []:
        level = para.get("level") or 0
        out.append(("#" * level + " " if level else "") + str(para.get("text", "")))
    for n, table in enumerate(doc.get("tables") or [], start=1):
        out.append(f"\nTable {n}:")
        out.extend(" | ".join(map(str, row)) for row in table)
    return "\n".join(out)


def _document(spec: DocumentEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    return f"Document {spec.path}", render_document(probe.document(spec.path))


def _file(spec: FileEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    data = probe.file(spec.path)
    return f"File {spec.path}", "(file does not exist)" if data is None else data.decode(
        "utf-8", errors="replace"
    )


def _sql(spec: SqlEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    try:
        rows = probe.sql(spec.query, spec.params)
    except StateError as exc:
        return "Database query", f"{spec.query}\n({exc})"
    shown = rows[: spec.max_rows]
    lines = [" | ".join(shown[0])] if shown else []
    lines += [
        " | ".join(json.dumps(v, default=str) if not isinstance(v, str) else v for v in r.values())
        for r in shown
    ]
    more = f"\n({len(rows) - len(shown)} more rows)" if len(rows) > len(shown) else ""
    return "Database query", f"{spec.query}\n" + ("\n".join(lines) or "(no rows)") + more


def _transcript(spec: TranscriptEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    messages = list(traj.messages) if traj else []
    if spec.tools is not None:
        wanted = set(spec.tools)
        ids = {c.id for m in messages for c in m.tool_calls if c.name in wanted}
        lines = []
        for m in messages:
            lines += [f"CALL {c.name}({c.arguments})" for c in m.tool_calls if c.name in wanted]
            if m.role == "tool" and m.tool_call_id in ids:
                lines.append(f"RESULT {m.name or ''}: {m.content}")
    else:
        if spec.last:
            messages = messages[-spec.last :]
        lines = []
        for m in messages:
            calls = "".join(f"\n  CALL {c.name}({c.arguments})" for c in m.tool_calls)
            lines.append(f"[{m.role}] {m.content}{calls}")
    return "Transcript", "\n".join(lines) or "(nothing)"


def _text(spec: TextEvidence, probe: Probe, traj: Trajectory | None) -> tuple[str, str]:
    return spec.label, spec.text


RENDERERS = {
    "final_answer": _final_answer,
    "channel": _channel,
    "document": _document,
    "file": _file,
    "sql": _sql,
    "transcript": _transcript,
    "text": _text,
}


def render(evidence: list[Evidence], probe: Probe, trajectory: Trajectory | None) -> str:
    """All evidence blocks for one judge item."""
    blocks = []
    for spec in evidence:
        title, body = RENDERERS[spec.type](spec, probe, trajectory)
        blocks.append(f"### {title}\n{clip(body, spec.max_chars)}")
    return "\n\n".join(blocks)
