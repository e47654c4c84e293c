"""Price lists side by side. Level 0: a product's price on a named list; level 1: which products cost more on a draft list than on the current one; level 2: load approved price changes from a spreadsheet and tell #sales."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    by_id,
    execute_step,
    post_step,
    quoted,
    sql_step,
    state,
    stated,
)
from families._finance import LIMITS_L2, eur, xlsx_bytes
from gym.families import Instance

TITLE = "Compare and update price lists"
LEVELS = (0, 1, 2)
SPLIT = "train"
CURRENT = "Standard 2025 H1"
DRAFTS = (
    "Standard 2025 H2 draft",
    "Public Sector 2025",
    "Distributor 2025",
    "Enterprise Bundle 2025",
    "Education 2025",
)
PRICE_SQL = (
    "SELECT p.sku, p.name, i.unit_price FROM price_list_items i JOIN products p ON p.id = i.product_id "
    "JOIN price_lists pl ON pl.id = i.price_list_id WHERE pl.name = {name} ORDER BY p.sku"
)


def _change(price: Decimal, percent: int) -> Decimal:
    return (price * (100 + percent) / 100).quantize(Decimal("1"), ROUND_HALF_UP).quantize(Decimal("0.01"))


def generate(world, rng, level: int) -> Instance:
    products = by_id(world, "products")
    lists = by_id(world, "price_lists")
    prices: dict[str, dict[int, Decimal]] = {pl["name"]: {} for pl in lists.values()}
    for i in world["price_list_items"].dicts():
        prices[lists[i["price_list_id"]]["name"]][i["product_id"]] = i["unit_price"]
    if level == 0:
        name = rng.choice(sorted(prices))
        pid = rng.choice(sorted(prices[name]))
        value = prices[name][pid]
        product = products[pid]["name"]
        return Instance(
            prompt=f"What is the unit price of {product} on the '{name}' price list, in EUR?",
            rubric_items=[stated("price", f"The answer gives {value}", "amount", value, 3)],
            solution=[
                sql_step(
                    PRICE_SQL.format(name=quoted(name)).replace(" ORDER BY", f" AND p.id = {pid} ORDER BY")
                ),
                {"answer": f"{product} costs {eur(value)} EUR on '{name}'."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    current = prices[CURRENT]
    pids = sorted(current)
    if level == 1:
        draft = rng.choice(DRAFTS)
        moved = rng.sample(pids, rng.randint(4, 8))
        up = moved[: rng.randint(2, len(moved) - 2)]
        new = dict(current)
        for pid in moved:
            new[pid] = _change(current[pid], rng.choice([4, 6, 8, 10, 15]) * (1 if pid in up else -1))
        up = sorted(up, key=lambda p: products[p]["sku"])
        values = ", ".join(f"({pid}, {new[pid]})" for pid in pids)
        return Instance(
            prompt=(
                f"Julia has drafted the price list '{draft}'. Which products cost more on it than on the current "
                f"'{CURRENT}' list? For each of them give its price on both lists."
            ),
            sql=(
                f"INSERT INTO price_lists (name, currency, valid_from) VALUES ({quoted(draft)}, 'EUR', DATE '2025-07-01');\n"
                "INSERT INTO price_list_items (price_list_id, product_id, unit_price) SELECT "
                f"(SELECT id FROM price_lists WHERE name = {quoted(draft)}), v.pid, v.price FROM (VALUES {values}) AS v(pid, price);\n"
            ),
            # Each price counts next to its product's name only; a product that did not get dearer is a
            # wrong one.
            rubric_items=[
                item
                for pid in up
                for item in (
                    stated(
                        f"up-{products[pid]['sku']}",
                        f"{products[pid]['name']} costs {new[pid]} on the draft",
                        "amount",
                        new[pid],
                        2,
                        about=products[pid]["name"],
                    ),
                    stated(
                        f"now-{products[pid]['sku']}",
                        f"... and {current[pid]} on the current list",
                        "amount",
                        current[pid],
                        1,
                        about=products[pid]["name"],
                    ),
                )
            ],
            solution=[
                sql_step(
                    "SELECT p.sku, p.name, cur.unit_price AS current, d.unit_price AS draft FROM price_list_items d "
                    "JOIN price_list_items cur ON cur.product_id = d.product_id JOIN products p ON p.id = d.product_id "
                    f"WHERE d.price_list_id = (SELECT id FROM price_lists WHERE name = {quoted(draft)}) AND "
                    f"cur.price_list_id = (SELECT id FROM price_lists WHERE name = {quoted(CURRENT)}) "
                    "AND d.unit_price > cur.unit_price ORDER BY p.sku"
                ),
                {
                    "answer": f"More expensive on '{draft}' than on '{CURRENT}': "
                    + "; ".join(
                        f"{products[p]['name']}: {eur(new[p])} EUR (now {eur(current[p])} EUR)" for p in up
                    )
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    name = rng.choice([CURRENT, "Partner 2025"])
    chosen = sorted(rng.sample(sorted(prices[name]), rng.randint(3, 5)), key=lambda p: products[p]["sku"])
    new = {p: _change(prices[name][p], rng.choice([-8, -5, 3, 5, 7, 10, 12])) for p in chosen}
    day = f"2025-05-{rng.randint(2, 28):02d}"
    path = f"sales/price_changes_{day}.xlsx"
    sheet = [["SKU", "Product", "Price list", "New unit price (EUR)"]]
    sheet += [[products[p]["sku"], products[p]["name"], name, float(new[p])] for p in chosen]
    where = "price_list_id = (SELECT id FROM price_lists WHERE name = {list}) AND product_id = {pid}"
    skus = [products[p]["sku"] for p in chosen]
    return Instance(
        prompt=(
            f"Marcus approved the price changes in /workspace/{path}. Update those prices in the database (only "
            f"those products on that list; leave everything else alone), then post in #sales which SKUs changed on "
            f"'{name}'."
        ),
        files={path: xlsx_bytes({"Changes": sheet})},
        rubric_items=[
            state(
                f"price-{products[p]['sku']}",
                f"{products[p]['sku']} costs {new[p]} on '{name}'",
                "SELECT unit_price FROM price_list_items WHERE " + where.format(list=quoted(name), pid=p),
                str(new[p]),
                3,
            )
            for p in chosen
        ]
        + [
            stated(f"announced-{s}", f"#sales hears the changed SKU {s}", "sku", s, 1, where="#sales")
            for s in skus
        ],
        solution=[
            {"tool": "office.read_sheet", "args": {"path": path}},
            sql_step(PRICE_SQL.format(name=quoted(name))),
            *(
                execute_step(
                    f"UPDATE price_list_items SET unit_price = {new[p]} WHERE "
                    + where.format(list=quoted(name), pid=p)
                )
                for p in chosen
            ),
            post_step(
                "sales",
                f"Price changes loaded on '{name}': "
                + ", ".join(
                    f"{products[p]['sku']} {eur(prices[name][p])} -> {eur(new[p])} EUR" for p in chosen
                ),
            ),
            {
                "answer": f"Updated {len(chosen)} prices on '{name}' ({', '.join(skus)}) and posted them in #sales."
            },
        ],
        damage={"allow": [{"table": "price_list_items", "columns": ["unit_price"], "at_most": len(chosen)}]},
        apps=["db", "office", "chat"],
        limits=LIMITS_L2,
    )
