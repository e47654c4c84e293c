"""Answers from the policy documents in /workspace/policies (parsed from the real files). Level 0: one rule
(a limit, the owner, a data class); level 1: apply an expense rule to a submitted claim (within it or not)."""

from __future__ import annotations

import datetime as dt
import functools
import html
import re
import zipfile
from decimal import Decimal
from pathlib import Path

from families._common import LIMITS_L0, LIMITS_L1, count_kind, sql_step, stated
from families._support import NOT_NEG
from gym.families import Instance

TITLE = "Look up and apply a company policy"
LEVELS = (0, 1)
SPLIT = "train"
POLICIES = Path(__file__).resolve().parent.parent / "initial_state" / "workspace" / "policies"
EXPENSE, DATA = "policies/expense_policy.docx", "policies/data_handling_policy.odt"
LIMITS = {  # rule: (pattern in the policy text, question variants)
    "deadline": (
        r"submitted within (\d+) days",
        (
            "Within how many days of the expense date must an expense claim be submitted?",
            "How many days after the expense date may someone still submit a claim?",
            "What is the deadline, in days after the expense date, for submitting expense claims?",
        ),
    ),
    "receipt": (
        r"claim over EUR (\d[\d,]*(?:\.\d\d)?) needs a receipt",
        (
            "Above what amount does an expense claim need a receipt?",
            "From which amount on is a receipt required for an expense claim?",
            "Which claim amount can be claimed without a receipt at most?",
        ),
    ),
    "lodging": (
        r"Hotels up to EUR (\d[\d,]*(?:\.\d\d)?) per night",
        (
            "What is the most we reimburse for a hotel per night?",
            "What is the hotel limit per night?",
            "How much may a hotel night cost at most to be reimbursed?",
        ),
    ),
    "meals": (
        r"meals up to EUR (\d[\d,]*(?:\.\d\d)?) per person",
        (
            "What is the limit for business meals per person?",
            "How much may a business meal cost per person?",
            "What is the per-person cap on business meals?",
        ),
    ),
    "software": (
        r"subscriptions up to EUR (\d[\d,]*(?:\.\d\d)?) are",
        (
            "Up to what amount is software reimbursed without the VP Engineering's prior approval?",
            "What is the software purchase limit before prior approval is needed?",
            "How expensive may a software subscription be without prior approval?",
        ),
    ),
    "equipment": (
        r"Equipment up to EUR (\d[\d,]*(?:\.\d\d)?) per item",
        (
            "Up to what price per item is equipment reimbursed?",
            "What is the equipment limit per item before Procurement must order it?",
            "How much may one piece of equipment cost to be claimed as an expense?",
        ),
    ),
    "approval": (
        r"Analysts may approve claims up to EUR (\d[\d,]*(?:\.\d\d)?)",
        (
            "Up to what amount may analysts approve expense claims themselves?",
            "Above what claim amount must an analyst escalate to the Head of Finance?",
            "What is the analysts' approval limit for expense claims?",
        ),
    ),
}
DAYS = count_kind(r"\bdays?\b")
# The verdict, in words the prompt does not use ("does it meet the rule?"): a negated phrase is the
# longer match, so "not allowed" is a breach, not an "allowed".
VERDICT = {
    "values": [
        {
            "value": "meets",
            "regex": rf"{NOT_NEG}\b(complies|compliant|allowed|acceptable|reimbursable|can be approved|may be approved|within (the |its )?(limit|rule|policy)|under the limit|below the limit|is fine)\b",
        },
        {
            "value": "breaks",
            "regex": rf"{NOT_NEG}\b(violat\w*|exceeds|exceeded|over the limit|above the limit|too late|(must|should|to) be rejected)\b|\bnot (allowed|compliant|reimbursable|acceptable|within)\b|\b(does not|doesn't) comply\b",
        },
    ]
}
CLASSES = {"values": ["Public", "Internal", "Confidential"]}
VERSION = {"regex": r"(?<![\d.])(?P<value>\d+\.\d+)(?![\d]|\.\d)"}


def _paragraphs(name: str) -> list[str]:
    """The text of a .docx or .odt, one string per paragraph or heading."""
    with zipfile.ZipFile(POLICIES / Path(name).name) as z:
        xml = z.read("word/document.xml" if name.endswith(".docx") else "content.xml").decode()
    blocks = re.findall(r"<w:p[ >].*?</w:p>|<text:[ph][ >].*?</text:[ph]>", xml, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", b)).strip() for b in blocks]


@functools.cache
def _facts() -> dict:
    expense, data = " ".join(_paragraphs(EXPENSE)), " ".join(_paragraphs(DATA))
    limits = {k: Decimal(re.search(rx, expense).group(1).replace(",", "")) for k, (rx, _) in LIMITS.items()}
    owner = re.search(r"Owner: ([^,]+), ", expense).group(1)
    classes = {}
    for label, items in re.findall(r"(Public|Internal|Confidential): (.+?)\.(?= [A-Z][a-z]+:| \d|$)", data):
        for thing in re.split(r",\s*(?![^()]*\))", items):
            classes[thing.split(" (")[0].strip()] = label
    versions = {
        name: re.search(r"Version ([\d.]+), effective (\d+ \w+ \d{4})", text).groups()
        for name, text in ((EXPENSE, expense), (DATA, data))
    }
    return {
        "versions": versions,
        "limits": limits,
        "owner": owner,
        "classes": classes,
        "names": re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+(?= \(|,| or|\))", data),
    }


def generate(world, rng, level: int) -> Instance:
    facts = _facts()
    limits = facts["limits"]
    if level == 1:
        return _apply(world, rng, limits)
    kind = rng.choice(["limit"] * 5 + ["class"] * 3 + ["owner", "version"])
    read = {"tool": "office.read_document", "args": {"path": EXPENSE if kind != "class" else DATA}}
    claims = {}
    if kind == "limit":
        # The rule's value: any other limit of the policy in the answer is a wrong one (grader.claims).
        rule = rng.choice(sorted(LIMITS))
        value = limits[rule]
        question = rng.choice(LIMITS[rule][1])
        if rule == "deadline":
            said = f"{value} days"
            items = [stated("value", f"The answer gives {said}", "days", int(value))]
            claims = {"days": DAYS}
        else:
            said = f"EUR {value:,.2f}"
            items = [stated("value", f"The answer gives {said}", "amount", value)]
    elif kind == "class":
        thing, label = rng.choice(sorted(facts["classes"].items()))
        question, said = f"Under our data handling policy, how are {thing} classified?", label
        items = [stated("class", f"The answer says {label}", "data_class", label)]
        claims = {"data_class": CLASSES}
    elif kind == "version":
        where = rng.choice([EXPENSE, DATA])
        version, since = facts["versions"][where]
        question, said = (
            "Which version of the policy is in force, and since when?",
            f"Version {version}, effective {since}",
        )
        items = [
            stated("version", f"The answer gives version {version}", "version", version),
            stated(
                "since",
                f"The answer gives {since}",
                "date",
                dt.datetime.strptime(since, "%d %B %Y").date(),
                1,
            ),
        ]
        claims = {"version": VERSION}
        read["args"]["path"] = where
    else:
        question, said = "Who is the owner of our expense policy?", facts["owner"]
        items = [stated("owner", f"The answer names {said}", "employee", said)]
    where = read["args"]["path"]
    return Instance(
        prompt=f"{question} The answer is in /workspace/{where}.",
        rubric_items=items,
        claims=claims,
        solution=[read, {"answer": f"{said}."}],
        apps=["office"],
        limits=LIMITS_L0,
    )


def _apply(world, rng, limits) -> Instance:
    """A new claim (overlay) near one limit; the verdict and the compared figure follow from the policy."""
    person = rng.choice(
        [
            p
            for p in world["employees"].dicts()
            if p["status"] == "active" and p["chat_username"] != "jordan.lee"
        ]
    )
    claim_id = max(c["id"] for c in world["expense_claims"].dicts()) + 1
    topic = rng.choice(["meals", "lodging", "equipment", "receipt", "deadline"])
    bad = rng.random() < 0.5
    limit = limits[topic]
    span = (0.55, 0.9) if not bad else (1.1, 1.6)
    submitted = dt.date(2025, 4, rng.randint(1, 4))
    receipt, days, unit = True, rng.randint(3, 40), None
    if topic in ("meals", "lodging"):
        count = rng.randint(2, 6) if topic == "meals" else rng.randint(1, 4)
        figure = (limit * Decimal(str(round(rng.uniform(*span), 2)))).quantize(Decimal("0.01"))
        amount = figure * count
        unit = f"{count} people" if topic == "meals" else f"{count} night{'s' if count > 1 else ''}"
        text = (
            f"Client dinner with {rng.choice(world['customers'].dicts())['name']} ({unit})"
            if topic == "meals"
            else f"Hotel {rng.choice(['London', 'Munich', 'Paris', 'Vienna', 'Zurich'])}, {unit}"
        )
        what = f"EUR {figure} per {'person' if topic == 'meals' else 'night'}"
    elif topic == "equipment":
        amount = figure = (limit * Decimal(str(round(rng.uniform(*span), 2)))).quantize(
            Decimal("1")
        ) - Decimal("0.01")
        text, what = (
            rng.choice(
                ["27-inch monitor", "Ergonomic office chair", "Tablet for demos", "Standing desk frame"]
            ),
            f"EUR {figure}",
        )
    elif topic == "receipt":
        amount = figure = (
            limit
            * Decimal(str(round(rng.uniform(0.4, 0.85) if rng.random() < 0.5 else rng.uniform(1.2, 3), 2)))
        ).quantize(Decimal("0.01"))
        receipt = not bad if amount > limit else rng.random() < 0.5
        bad = amount > limit and not receipt
        text, what = (
            rng.choice(
                [
                    "Taxi to the airport",
                    "Train ticket Berlin-Hamburg",
                    "Parking at customer site",
                    "Printer paper and toner",
                ]
            ),
            f"EUR {figure} {'with' if receipt else 'without'} a receipt",
        )
    else:
        days = int(limit) + rng.randint(5, 40) if bad else rng.randint(5, int(limit) - 5)
        amount = Decimal(str(round(rng.uniform(20, 300), 2))).quantize(Decimal("0.01"))
        figure, text, what = days, "Train ticket to customer workshop", f"{days} days after the expense date"
    category = {
        "meals": "meals",
        "lodging": "lodging",
        "equipment": "equipment",
        "receipt": "travel",
        "deadline": "travel",
    }[topic]
    expense_date = submitted - dt.timedelta(days)
    sql = (
        "INSERT INTO expense_claims (id, employee_id, submitted_on, expense_date, category, description, amount, has_receipt, status) "
        f"VALUES ({claim_id}, {person['id']}, DATE '{submitted}', DATE '{expense_date}', '{category}', '{text.replace(chr(39), chr(39) * 2)}', {amount}, {str(receipt).lower()}, 'pending');\n"
        "SELECT setval(pg_get_serial_sequence('expense_claims', 'id'), (SELECT max(id) FROM expense_claims));\n"
    )
    rule = {
        "meals": "meals limit",
        "lodging": "hotel limit",
        "equipment": "equipment limit",
        "receipt": "receipt rule",
        "deadline": "submission deadline",
    }[topic]
    # The compared figure and the limit are claims (days for the deadline, else amounts): another limit
    # of the policy is a wrong one; the claim's own total and its count of people or nights are no
    # wrong amount to mention.
    kind = "days" if topic == "deadline" else "amount"
    allow = [str(amount), *([count] if topic in ("meals", "lodging") else [])]
    figures = {"days": DAYS} if topic == "deadline" else {"amount": {"extract": "amount", "allow": allow}}
    return Instance(
        prompt=(
            f"Does expense claim {claim_id} meet the {rule} of our expense policy (/workspace/{EXPENSE})? Give the figure "
            "you compared with the policy, the policy's limit, and your verdict. Don't change the claim."
        ),
        sql=sql,
        rubric_items=[
            stated(
                "verdict",
                f"The answer says the claim {'breaks' if bad else 'meets'} the {rule}",
                "verdict",
                "breaks" if bad else "meets",
                3,
            ),
            stated("figure", f"The answer gives the compared figure: {what}", kind, figure, 2),
            stated(
                "limit",
                f"The answer gives the limit {limit}",
                kind,
                int(limit) if topic == "deadline" else limit,
                1,
            ),
        ],
        claims={"verdict": VERDICT, **figures},
        solution=[
            sql_step(
                f"SELECT id, category, description, amount, has_receipt, expense_date, submitted_on, submitted_on - expense_date AS days FROM expense_claims WHERE id = {claim_id}"
            ),
            {"tool": "office.read_document", "args": {"path": EXPENSE}},
            {
                "answer": f"Claim {claim_id}: {what}; the policy's limit is {limit if topic != 'deadline' else f'{limit} days'}"
                + (f" (receipts are needed above EUR {limit})" if topic == "receipt" else "")
                + ". "
                + ("It violates the rule and should be rejected." if bad else "It complies with the rule.")
            },
        ],
        apps=["db", "office"],
        limits=LIMITS_L1,
    )
