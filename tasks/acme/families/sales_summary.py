"""Won deals per account executive. Level 0: one rep's won amount in a month; level 1: every rep's won-deal count in a period; level 2: the per-rep spreadsheet with a SUM total row, shared in #sales."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, by_id, count_kind, full_name, item, sql_step, stated
from families._finance import LIMITS_L2, eur, month_after, month_label, slug
from gym.families import Instance

TITLE = "Won deals per account executive"
LEVELS = (0, 1, 2)
SPLIT = "train"
WON = 6  # pipeline_stages.id of Closed Won
SALES = 4  # departments.id of Sales
# A rep's deal count: "3 deals", "deals won: 3", or a sheet row's second cell ("Oliver Grant | 3 | 12000",
# columns A-C as the prompt asks), so the count is never read as an amount.
DEALS_CELL = {
    "regex": r"(?<![\w.,#/-])(?P<value>\d+)(?=\s+(?:won\s+)?deals?\b)"
    r"|(?<=\bdeals?(?:\s+won)?\s*[:=]\s*)(?P<value>\d+)(?![\w.,]\d|\w)"
    r"|(?<=^[^|\n]*\|\s*)(?P<value>\d+)(?=\s*(?:\||$))"
}


def _query(first: tuple[int, int], last: tuple[int, int]) -> str:
    end = month_after(*last)
    return (
        "SELECT e.first_name || ' ' || e.last_name AS rep, count(*) AS deals, sum(d.amount) AS won FROM deals d "
        "JOIN employees e ON e.id = d.owner_id JOIN pipeline_stages s ON s.id = d.stage_id "
        f"WHERE s.name = 'Closed Won' AND d.closed_on >= DATE '{first[0]}-{first[1]:02d}-01' "
        f"AND d.closed_on < DATE '{end[0]}-{end[1]:02d}-01' GROUP BY 1 ORDER BY won DESC"
    )


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    won: dict[tuple[int, int], dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for d in world["deals"].dicts():
        if d["stage_id"] == WON and d["closed_on"]:
            won[d["closed_on"].year, d["closed_on"].month][d["owner_id"]].append(d)
    months = sorted(m for m, reps in won.items() if len(reps) >= 2)
    if level == 0:
        month = rng.choice(months)
        rep = rng.choice(sorted(won[month]))
        value = sum((d["amount"] for d in won[month][rep]), Decimal(0))
        name, label = full_name(people[rep]), month_label(*month)
        return Instance(
            prompt=f"How much did {name} win (deals closed won) in {label}, in EUR?",
            rubric_items=[stated("won", f"The answer gives {value}", "amount", value, 3)],
            solution=[sql_step(_query(month, month)), {"answer": f"{name} won {eur(value)} EUR in {label}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    span = rng.choice([1, 2, 3]) if level == 1 else rng.choice([1, 1, 2, 3])
    starts = [m for m in months if all(month_after(*m, k) in won for k in range(span))]
    first = rng.choice(starts)
    last = month_after(*first, span - 1)
    period = [month_after(*first, k) for k in range(span)]
    deals: dict[int, list[dict]] = defaultdict(list)
    for m in period:
        for r, ds in won[m].items():
            deals[r] += ds
    amount = {r: sum((d["amount"] for d in ds), Decimal(0)) for r, ds in deals.items()}
    ranked = sorted(amount, key=lambda r: (-amount[r], people[r]["last_name"]))
    label = month_label(*first) if span == 1 else f"{month_label(*first)} to {month_label(*last)}"
    count = sum(len(ds) for ds in deals.values())
    if level == 1:
        return Instance(
            prompt=(
                f"How many deals did each account executive close won from {month_label(*first)} through "
                f"{month_label(*last)}? List only the reps who won at least one, and give the total count."
                if span > 1
                else f"How many deals did each account executive close won in {label}? List only the reps who "
                "won at least one, and give the total count."
            ),
            # A count is right next to its rep's name only: a rep who won nothing, listed with any count,
            # is a wrong one.
            rubric_items=[
                stated(
                    f"rep-{slug(full_name(people[r]))}",
                    f"{full_name(people[r])}: {len(deals[r])} deals",
                    "deals",
                    len(deals[r]),
                    about=full_name(people[r]),
                )
                for r in ranked
            ]
            + [stated("total", f"The total is {count} deals", "deals", count, 1)],
            claims={"deals": count_kind("deals?")},
            solution=[
                sql_step(_query(first, last)),
                {
                    "answer": f"Deals closed won, {label}:\n"
                    + "\n".join(f"- {full_name(people[r])}: {len(deals[r])} deals" for r in ranked)
                    + f"\nTotal: {count} deals."
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    tag = f"{first[0]}-{first[1]:02d}" + ("" if span == 1 else f"_to_{last[0]}-{last[1]:02d}")
    path = f"reports/won_deals_{tag}.xlsx"
    total = sum(amount.values(), Decimal(0))
    top = full_name(people[ranked[0]])
    n = len(ranked) + 1
    names = [full_name(people[r]) for r in ranked]
    sheet = f"file:{path}"
    rows = [["Account executive", "Deals won", "Won amount (EUR)"]]
    rows += [[name, len(deals[r]), float(amount[r])] for r, name in zip(ranked, names, strict=True)]
    rows += [["Total", f"=SUM(B2:B{n})", f"=SUM(C2:C{n})"]]
    return Instance(
        prompt=(
            f"Marcus asked in #sales for the won-deals summary per account executive for {label}. Please build "
            f"/workspace/{path} with one row per account executive who won deals in that period: the number of "
            "deals closed won and their total amount in EUR (columns A-C), sorted by amount (highest first), and a "
            "row labelled Total in column A whose count and amount use SUM formulas. Then share the file in #sales "
            "and say who the top rep was."
        ),
        # The sheet's rows are lines: each rep's count and amount count next to the rep's name only, and
        # a rep who won nothing is a wrong name in the sheet. The Total row's figures are checked below.
        rubric_items=[
            item
            for r, name in zip(ranked, names, strict=True)
            for item in (
                stated(f"rep-{slug(name)}", f"A row for {name}", "employee", name, 1, where=sheet),
                stated(
                    f"deals-{slug(name)}",
                    f"{name}: {len(deals[r])} deals",
                    "deals",
                    len(deals[r]),
                    1,
                    where=sheet,
                    about=name,
                ),
                stated(
                    f"won-{slug(name)}",
                    f"{name}: {amount[r]} EUR",
                    "amount",
                    amount[r],
                    1,
                    where=sheet,
                    about=name,
                ),
            )
        ]
        + [
            item(
                "sorted",
                "Rows are sorted by amount, highest first",
                "rows_in_order",
                {"path": path, "keys": names},
                2,
                "spreadsheet",
            ),
            *(
                item(
                    f"total-{col}",
                    f"The Total row computes {value} in column {col} with SUM",
                    "labelled_total",
                    {"path": path, "label": "Total", "column": col, "expected": value},
                    2,
                    "spreadsheet",
                )
                for col, value in (("B", count), ("C", float(total)))
            ),
            item(
                "shared",
                "The file was shared in #sales",
                "shared_file",
                {"channel": "sales", "name": path.rsplit("/", 1)[1]},
                3,
                "chat",
            ),
            stated(
                "top-rep", f"A post in #sales names {top} as the top rep", "employee", top, 2, where="#sales"
            ),
        ],
        claims={
            "deals": DEALS_CELL | {"allow": [str(count)]},
            "amount": {"extract": "amount", "allow": [str(total)]},
        },
        solution=[
            sql_step(_query(first, last)),
            {"tool": "office.create_document", "args": {"path": path}},
            {"tool": "office.write_cells", "args": {"path": path, "start_cell": "A1", "rows": rows}},
            {
                "tool": "chat.attach_file",
                "args": {
                    "channel": "sales",
                    "path": path,
                    "message": f"@marcus.webb here is the won-deals summary per AE for {label}. "
                    f"Top rep by amount: {top}.",
                },
            },
            {
                "answer": f"Built {path} (one row per AE, Total row with SUM formulas) and shared it in #sales; {top} was the top rep."
            },
        ],
        apps=["db", "chat", "office"],
        limits=LIMITS_L2,
    )
