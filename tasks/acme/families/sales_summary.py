"""Won deals per account executive. Level 0: one rep's won amount in a month; level 1: every rep's won-deal count in a period; level 2: the per-rep spreadsheet with a SUM total row, shared in #sales."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    answer,
    by_id,
    count_regex,
    full_name,
    money_regex,
    no_spray,
    sql_step,
    text_regex,
)
from families._finance import LIMITS_L2, check, eur, month_after, month_label, slug
from gym.families import Instance

TITLE = "Won deals per account executive"
LEVELS = (0, 1, 2)
SPLIT = "train"
WON = 6  # pipeline_stages.id of Closed Won
SALES = 4  # departments.id of Sales


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
        amounts = {
            (m, r): sum((d["amount"] for d in ds), Decimal(0)) for m in months for r, ds in won[m].items()
        }
        value = amounts[month, rep]
        singles = {
            d["amount"] for r, ds in won[month].items() if r != rep for d in ds
        }  # in any dump of deals
        others = sorted(
            {money_regex(v) for (m, r), v in amounts.items() if (m == month or r == rep) and v != value}
            | {money_regex(v) for v in singles if v != value}
        )
        name, label = full_name(people[rep]), month_label(*month)
        return Instance(
            prompt=f"How much did {name} win (deals closed won) in {label}, in EUR?",
            rubric_items=[
                answer("won", f"The answer gives {value}", money_regex(value), 3),
                no_spray(others, "other months' or other reps' won amounts", -3),
            ],
            solution=[sql_step(_query(month, month)), {"answer": f"{name} won {eur(value)} EUR in {label}."}],
            apps=["postgres"],
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
    idle = [
        full_name(p)  # account executives first: listing a rep who won nothing is the likely slip
        for p in sorted(people.values(), key=lambda p: (p["title"] != "Account Executive", p["id"]))
        if p["department_id"] == SALES and p["id"] not in deals
    ]
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
            rubric_items=[
                answer(
                    f"rep-{slug(full_name(people[r]))}",
                    f"{full_name(people[r])}: {len(deals[r])} deals",
                    rf"{text_regex(full_name(people[r]))}\D{{0,40}}(?<![\d.,]){len(deals[r])}(?![\d.,])",
                )
                for r in ranked
            ]
            + [
                answer("total", f"The total is {count} deals", count_regex(count, "deals?"), 1),
                no_spray([text_regex(n) for n in idle], "sales staff who won nothing in the period"),
            ],
            solution=[
                sql_step(_query(first, last)),
                {
                    "answer": f"Deals closed won, {label}: "
                    + "; ".join(f"{full_name(people[r])}: {len(deals[r])} deals" for r in ranked)
                    + f". Total: {count} deals."
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    tag = f"{first[0]}-{first[1]:02d}" + ("" if span == 1 else f"_to_{last[0]}-{last[1]:02d}")
    path = f"reports/won_deals_{tag}.xlsx"
    total = sum(amount.values(), Decimal(0))
    top = full_name(people[ranked[0]])
    n = len(ranked) + 1
    names = [full_name(people[r]) for r in ranked]
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
        rubric_items=[
            check(
                f"rep-{slug(name)}",
                f"A row for {name} shows {len(deals[r])} deals and {amount[r]} EUR",
                "sheet_row",
                {"path": path, "key": name, "values": [len(deals[r]), float(amount[r])]},
                3,
                "spreadsheet",
            )
            for r, name in zip(ranked, names, strict=True)
        ]
        + [
            check(
                "sorted",
                "Rows are sorted by amount, highest first",
                "rows_in_order",
                {"path": path, "keys": names},
                2,
                "spreadsheet",
            ),
            *(
                check(
                    f"total-{col}",
                    f"The Total row computes {value} in column {col} with SUM",
                    "labelled_total",
                    {"path": path, "label": "Total", "column": col, "expected": value},
                    2,
                    "spreadsheet",
                )
                for col, value in (("B", count), ("C", float(total)))
            ),
            check(
                "no-idle-rep",
                f"Penalty: the sheet lists {idle[0]}, who won no deal in the period",
                "sheet_row",
                {"path": path, "key": idle[0], "values": []},
                -2,
                "penalties",
                negate=True,
                reason=f"A penalty: it holds unless the sheet lists {idle[0]}.",
            ),
            check(
                "shared",
                "The file was shared in #sales",
                "shared_file",
                {"channel": "sales", "name": path.rsplit("/", 1)[1]},
                3,
                "chat",
            ),
            check(
                "top-rep",
                f"A post in #sales names {top} as the top rep",
                "posted",
                {"channel": "sales", "all_of": [text_regex(top)]},
                2,
                "chat",
            ),
        ],
        solution=[
            sql_step(_query(first, last)),
            {"tool": "office.create_document", "args": {"path": path}},
            {"tool": "office.write_cells", "args": {"path": path, "start_cell": "A1", "rows": rows}},
            {
                "tool": "chat.attach_file",
                "args": {
                    "channel": "sales",
                    "path": path,
                    "message": f"@marcus.webb here is the won-deals summary per AE for {label}: {count} deals, "
                    f"EUR {eur(total)} in total. Top rep by amount: {top} ({len(deals[ranked[0]])} deals, "
                    f"EUR {eur(amount[ranked[0]])}).",
                },
            },
            {
                "answer": f"Built {path} ({len(ranked)} AEs, Total row with SUM formulas) and shared it in #sales; {top} was the top rep."
            },
        ],
        apps=["postgres", "chat", "office"],
        limits=LIMITS_L2,
    )
