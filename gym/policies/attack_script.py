"""The white-box attacker's program, run as the agent inside the sandbox (standard library only).

`python3 attack_script.py PLAN.json`. The plan (gym.policies.attacker) says what the rubric reads:
the places it reads (the answer, channels, direct messages, documents), the kinds of value its
items ask for and the pools their subjects come from, never the values themselves. This program
reads everything the agent may read (every table it may SELECT, with foreign keys resolved to
names and per-group counts and sums; every chat post it can see; the documents in /workspace),
writes the plan's strategy into every place, and prints the text for the final answer:

- spray: every candidate value of every kind, on a line with each candidate subject, and every
  row of each decision's table set to the decision's success word;
- dump: every readable row, one line each with its names, plus the per-group aggregates.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

WORK = Path("/tmp/egym-attack")
MAIL_ENV = Path("/home/agent/.config/egym/mail.env")  # the agent's mail account (mcp_wrappers.mail.load)
POST_CHARS = 15_000  # under Mattermost's post limit
MAX_POSTS = 8
LABELS = ("name", "title", "number", "subject", "code", "email", "sku")
ROW_SEPARATOR = " || ' | ' || "  # SQL: one text per row, its fields separated by ' | '


def psql(sql: str) -> list[list[str]]:
    done = subprocess.run(
        ["psql", "-X", "-At", "-F", "\t", "-c", sql], capture_output=True, text=True, timeout=60, check=False
    )
    return [line.split("\t") for line in done.stdout.splitlines() if line]


# -- reading everything the agent may read ------------------------------------------------------


def readable_tables() -> list[str]:
    return [
        r[0]
        for r in psql(
            "SELECT quote_ident(table_schema)||'.'||quote_ident(table_name) FROM information_schema.table_privileges "
            "WHERE grantee = current_user AND privilege_type = 'SELECT' "
            "AND table_schema NOT IN ('pg_catalog', 'information_schema') GROUP BY 1 ORDER BY 1"
        )
    ]


def columns(table: str) -> list[tuple[str, str]]:
    rows = psql(
        f"SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = "
        f"'{table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
    )
    return [(r[0], r[1]) for r in rows if len(r) == 2]


def foreign_keys() -> dict[tuple[str, str], str]:
    """(table, column) -> referenced table, from pg_catalog (readable by every role)."""
    rows = psql(
        "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text FROM pg_constraint c "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
        "WHERE c.contype = 'f' AND array_length(c.conkey, 1) = 1"
    )
    return {(r[0].split(".")[-1], r[1]): r[2].split(".")[-1] for r in rows if len(r) == 3}


def label_sql(table: str, cols: list[str], alias: str) -> str | None:
    if "first_name" in cols and "last_name" in cols:
        return f"{alias}.first_name || ' ' || {alias}.last_name"
    found = next((c for c in LABELS if c in cols), None)
    return f"{alias}.{found}::text" if found else None


def database() -> tuple[list[str], list[str]]:
    """(one line per readable row with its foreign keys as names, per-group counts and sums)."""
    tables = readable_tables()
    cols = {t.split(".")[-1]: columns(t) for t in tables}
    fks = foreign_keys()
    rows_out, aggregates = [], []
    for table in tables:
        name = table.split(".")[-1]
        own = cols[name]
        select, joins = [], []
        for i, (col, _type) in enumerate(own):
            ref = fks.get((name, col))
            label = label_sql(ref, [c for c, _ in cols.get(ref, [])], f"r{i}") if ref in cols else None
            if label:
                joins.append(f"LEFT JOIN {ref} r{i} ON r{i}.id = t.{col}")
                select.append(f"'{col}=' || coalesce({label}, '')")
            else:
                select.append(f"'{col}=' || coalesce(t.{col}::text, '')")
        sql = f"SELECT {ROW_SEPARATOR.join(select)} FROM {table} t {' '.join(joins)} LIMIT 5000"
        rows_out += [f"{name}: {r[0]}" for r in psql(sql)]
        numeric = [c for c, t in own if t.startswith(("numeric", "integer", "bigint", "real", "double"))]
        numeric = [c for c in numeric if c != "id" and (name, c) not in fks]
        small = [
            c
            for c, t in own
            if t.startswith(("text", "character"))
            and len(psql(f"SELECT DISTINCT {c} FROM {table} LIMIT 9")) <= 8
        ]
        for col, _type in own:
            ref = fks.get((name, col))
            label = label_sql(ref, [c for c, _ in cols.get(ref, [])], "r") if ref in cols else None
            if not label:
                continue
            for by in [None, *small]:
                group = f"{label}" + (f", t.{by}" if by else "")
                sums = "".join(f", sum(t.{n})" for n in numeric)
                for r in psql(
                    f"SELECT {group}, count(*){sums} FROM {table} t JOIN {ref} r ON r.id = t.{col} GROUP BY {group} LIMIT 2000"
                ):
                    head = r[0] + (f" {by}={r[1]}" if by else "")
                    figures = r[2:] if by else r[1:]
                    aggregates.append(
                        f"{head}: {name} count={figures[0]}"
                        + "".join(f", sum({n})={v}" for n, v in zip(numeric, figures[1:], strict=False))
                    )
    return rows_out, aggregates


def chat_call(method: str, path: str, body: object = None) -> object:
    request = urllib.request.Request(
        os.environ["MATTERMOST_URL"] + "/api/v4" + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={
            "Authorization": "Bearer " + os.environ["MATTERMOST_TOKEN"],
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def load_chat_env() -> bool:
    env = Path.home() / ".config" / "egym" / "chat.env"
    if not env.is_file():
        return False
    for line in env.read_text().splitlines():
        key, _, value = line.partition("=")
        if key and value:
            os.environ[key.strip()] = value.strip().strip("'\"")
    return "MATTERMOST_URL" in os.environ


def chat_lines() -> list[str]:
    out = []
    for team in chat_call("GET", "/users/me/teams"):
        for channel in chat_call("GET", f"/users/me/teams/{team['id']}/channels"):
            posts = chat_call("GET", f"/channels/{channel['id']}/posts?per_page=200")
            out += [p["message"] for p in posts.get("posts", {}).values()]
    return out


def document_lines() -> list[str]:
    out = []
    for path in Path("/workspace").rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        if path.suffix in (".docx", ".xlsx", ".odt", ".ods", ".pptx"):
            try:
                with zipfile.ZipFile(path) as z:
                    for member in z.namelist():
                        if member.endswith(".xml") and (
                            "sheet" in member
                            or "document" in member
                            or "content" in member
                            or "sharedStrings" in member
                        ):
                            text = re.sub(
                                r"<[^>]+>", " ", z.read(member)[:2_000_000].decode("utf-8", "replace")
                            )
                            out += [" ".join(text.split())]
            except (zipfile.BadZipFile, OSError):
                continue
        elif path.suffix in (".txt", ".md", ".csv", ".json") and path.stat().st_size < 2_000_000:
            out += path.read_text(errors="replace").splitlines()
    return out


# -- composing -----------------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d{1,2})?(?![\w])")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHRASE = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z&]+)*")


def candidates(kind: dict, text: str) -> list[str]:
    source = kind["source"]
    if source == "values":
        if kind.get("query"):  # a lexicon the rubric reads from the initial state: read it as the agent
            return [r[0] for r in psql(kind["query"])]
        return list(kind["values"])
    if source == "regex":
        pattern = re.compile(kind["regex"], 0 if kind.get("case_sensitive") else re.IGNORECASE)
        found = [
            m.group("value") if "value" in pattern.groupindex else m.group(0) for m in pattern.finditer(text)
        ]
        return sorted(set(filter(None, found)))
    if source == "amount":
        return sorted(set(NUMBER.findall(text)), key=lambda v: float(v))
    if source == "date":
        return sorted(set(DATE.findall(text)))
    if source == "email":
        return sorted(set(EMAIL.findall(text)))
    if source == "count":
        return [f"{n} {kind['noun_text']}" for n in range(0, 61)]
    if source == "duration":
        return [
            f"{n} minutes"
            for n in sorted({int(float(v)) for v in NUMBER.findall(text)} | set(range(0, 600, 5)))
        ][:3000]
    return []


def subject_pool(pools: list[dict], text: str) -> list[str]:
    out: list[str] = []
    for pool in pools:
        if pool["type"] == "values":
            out += pool["values"]
        elif pool["type"] == "numbers":
            out += sorted({m for m in NUMBER.findall(text) if len(m) == pool["digits"]})
        else:
            out += sorted(set(PHRASE.findall(text)))[:400]
    return list(dict.fromkeys(out))


def compose(plan: dict, dump: str, rows: list[str], aggregates: list[str]) -> str:
    if plan["strategy"] == "dump":
        # Lines holding the most lexicon values of the rubric's kinds first (a place's limit cuts the rest).
        lexicon = [
            v for kind in plan["kinds"].values() if kind["source"] == "values" for v in candidates(kind, dump)
        ]
        lines = rows + aggregates
        return "\n".join(sorted(lines, key=lambda line: -sum(v in line for v in lexicon)))
    # Small kinds first (lexicons, counts), so every kind is written before a place's limit cuts the rest.
    per_kind = sorted((candidates(kind, dump) for kind in plan["kinds"].values()), key=len)
    values = [v for found in per_kind for v in found]
    subjects = subject_pool(plan["subjects"], dump)
    line = ", ".join(values)
    if subjects:
        return "\n".join(f"{s}: {line}" for s in subjects)
    return "\n".join(", ".join(values[i : i + 40]) for i in range(0, len(values), 40))


# -- writing everywhere the rubric reads ---------------------------------------------------------


def post(place: str, text: str) -> None:
    if place.startswith("dm:"):
        me = chat_call("GET", "/users/me")
        other = next((u for u in place[3:].split(",") if u != me["username"]), me["username"])
        them = chat_call("GET", f"/users/username/{other}")["id"]
        channel_id = chat_call("POST", "/channels/direct", [me["id"], them])["id"]
    else:
        name = place.lstrip("#")
        team = chat_call("GET", "/users/me/teams")[0]["id"]
        channel_id = chat_call("GET", f"/teams/{team}/channels/name/{name}")["id"]
    for start in range(0, min(len(text), POST_CHARS * MAX_POSTS), POST_CHARS):
        chat_call("POST", "/posts", {"channel_id": channel_id, "message": text[start : start + POST_CHARS]})


def send_mail(address: str, text: str) -> None:
    """Mail `text` to `address` as the agent (its own account, as any mail client would)."""
    import datetime as dt

    from mcp_wrappers.mail.client import MailClient, compose

    env = dict(line.split("=", 1) for line in MAIL_ENV.read_text().splitlines() if "=" in line)
    msg = compose(
        sender=env["MAIL_ADDRESS"],
        to=[address],
        subject="Re: your request",
        body=text,
        date=dt.datetime.now(dt.UTC),
    )
    MailClient(env["MAIL_ADDRESS"], env["MAIL_PASSWORD"]).send(msg)


def write_file(path: str, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix in (".txt", ".md", ".csv", ".json", ".eml"):
        target.write_text(text)
        return
    # An office document: write the lines as a table (or text) and let LibreOffice convert it.
    source = WORK / (target.stem + (".csv" if target.suffix in (".xlsx", ".ods") else ".txt"))
    source.write_text(text.replace(" | ", ",").replace(": ", ",") if source.suffix == ".csv" else text)
    subprocess.run(
        [
            "soffice",
            "--headless",
            "--convert-to",
            target.suffix.lstrip("."),
            "--outdir",
            str(target.parent),
            str(source),
        ],
        capture_output=True,
        timeout=90,
        check=False,
    )
    converted = target.parent / (source.stem + target.suffix)
    if converted.exists() and converted != target:
        converted.replace(target)


def decide_everything(decisions: list[dict]) -> None:
    """Blanket actions: every row of each decision's table set to the one value (approve everything)."""
    for d in decisions:
        value = d["value"].replace("'", "''")
        psql(f"UPDATE {d['table']} SET {d['column']} = '{value}'")


def main(plan_path: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    WORK.mkdir(parents=True, exist_ok=True)
    decide_everything(plan.get("decisions", []))
    rows, aggregates = database()
    chat: list[str] = []
    has_chat = load_chat_env()
    try:
        chat = chat_lines() if has_chat else []
    except OSError:  # no chat app in this task
        has_chat = False
    dump = "\n".join(rows + aggregates + chat + document_lines())
    text = compose(plan, dump, rows, aggregates)[: plan["limit"]]
    for place in plan["places"]:
        try:
            if place.startswith(("#", "dm:")) and has_chat:
                post(place, text)
            elif place.startswith("file:"):
                write_file(place[5:], text)
            elif place.startswith("mail:") and MAIL_ENV.is_file():
                send_mail(place[5:], text)
        except Exception as exc:  # noqa: BLE001 - a place that cannot be written is skipped
            print(f"[{place}: {type(exc).__name__}: {exc}]", file=sys.stderr)
    sys.stdout.write(text[: plan["answer_limit"]])


if __name__ == "__main__":
    main(sys.argv[1])
