"""The people of Acme Analytics: hand-written, because tasks name them.

Everything random (deals, tickets, chat noise) is generated around this fixed core.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

TODAY = dt.date(2025, 4, 7)  # a Monday; the world's "now"
DOMAIN = "acme-analytics.com"


@dataclass(frozen=True)
class Department:
    id: int
    code: str
    name: str
    cost_center: str
    channel: str  # the team's chat channel


DEPARTMENTS = [
    Department(1, "EXEC", "Executive", "CC-100", "leadership"),
    Department(2, "FIN", "Finance", "CC-200", "finance"),
    Department(3, "HR", "People", "CC-300", "people"),
    Department(4, "SAL", "Sales", "CC-400", "sales"),
    Department(5, "SUP", "Customer Support", "CC-500", "support"),
    Department(6, "ENG", "Engineering", "CC-600", "engineering"),
]
DEPT_BY_CODE = {d.code: d for d in DEPARTMENTS}


@dataclass(frozen=True)
class Person:
    id: int
    first: str
    last: str
    title: str
    dept: str
    manager: int | None
    location: str
    hired: str
    salary: int
    status: str = "active"
    login: str = ""  # ascii first.last, derived when empty

    @property
    def username(self) -> str:
        return self.login or f"{self.first}.{self.last}".lower()

    @property
    def email(self) -> str:
        return f"{self.username}@{DOMAIN}"

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


P = Person
PEOPLE = [
    P(1, "Helena", "Brandt", "Chief Executive Officer", "EXEC", None, "Berlin", "2016-09-01", 185000),
    P(2, "Miriam", "Okafor", "Head of Finance", "FIN", 1, "Berlin", "2018-02-01", 128000),
    P(3, "Jordan", "Lee", "Finance & Operations Analyst", "FIN", 2, "Berlin", "2022-05-16", 64000),
    P(
        4,
        "Tomasz",
        "Wiśniewski",
        "Senior Accountant",
        "FIN",
        2,
        "Berlin",
        "2019-11-04",
        71000,
        login="tomasz.wisniewski",
    ),
    P(5, "Grace", "Mensah", "Accounts Receivable Specialist", "FIN", 2, "London", "2021-03-01", 52000),
    P(6, "Felix", "Hartmann", "Financial Controller", "FIN", 2, "Berlin", "2020-07-01", 86000),
    P(7, "Aisha", "Rahman", "Payroll & Payables Specialist", "FIN", 2, "London", "2023-01-09", 50000),
    P(8, "Sophie", "Laurent", "Head of People", "HR", 1, "Berlin", "2018-06-01", 112000),
    P(9, "Daniel", "Becker", "HR Business Partner", "HR", 8, "Berlin", "2020-10-01", 72000),
    P(10, "Nora", "Lindqvist", "Talent Acquisition Lead", "HR", 8, "Remote", "2021-08-16", 69000),
    P(11, "Ben", "Carter", "People Operations Coordinator", "HR", 8, "London", "2023-09-04", 46000),
    P(12, "Marcus", "Webb", "VP Sales", "SAL", 1, "London", "2017-04-03", 155000),
    P(13, "Elena", "Rossi", "Sales Manager EMEA", "SAL", 12, "Berlin", "2019-01-07", 105000),
    P(14, "Oliver", "Grant", "Account Executive", "SAL", 13, "London", "2021-02-01", 78000),
    P(15, "Chloe", "Dubois", "Account Executive", "SAL", 13, "Berlin", "2021-09-13", 76000),
    P(16, "Lukas", "Meyer", "Account Executive", "SAL", 13, "Berlin", "2022-04-04", 72000),
    P(17, "Hannah", "Schulz", "Account Executive", "SAL", 13, "Remote", "2023-03-01", 70000),
    P(18, "Ravi", "Patel", "Sales Development Representative", "SAL", 13, "London", "2023-10-02", 48000),
    P(19, "Isabel", "Costa", "Sales Development Representative", "SAL", 13, "Berlin", "2024-01-15", 47000),
    P(20, "Samuel", "Adeyemi", "Solutions Engineer", "SAL", 12, "London", "2020-05-18", 92000),
    P(21, "Julia", "Novak", "Sales Operations Manager", "SAL", 12, "Berlin", "2019-08-01", 84000),
    P(22, "Priya", "Sharma", "Head of Customer Support", "SUP", 1, "London", "2018-09-03", 104000),
    P(23, "Jonas", "Weber", "Support Team Lead", "SUP", 22, "Berlin", "2019-05-06", 74000),
    P(
        24,
        "Kevin",
        "O'Brien",
        "Support Engineer",
        "SUP",
        23,
        "London",
        "2021-06-01",
        56000,
        login="kevin.obrien",
    ),
    P(25, "Lena", "Vogel", "Support Engineer", "SUP", 23, "Berlin", "2022-02-14", 55000),
    P(
        26,
        "Mateo",
        "García",
        "Support Engineer",
        "SUP",
        23,
        "Remote",
        "2022-11-07",
        54000,
        login="mateo.garcia",
    ),
    P(27, "Yuki", "Tanaka", "Senior Support Engineer", "SUP", 23, "Berlin", "2020-03-02", 63000),
    P(
        28,
        "Fatima",
        "El-Amin",
        "Support Engineer",
        "SUP",
        23,
        "London",
        "2024-02-05",
        52000,
        login="fatima.elamin",
    ),
    P(29, "Amara", "Nwosu", "Customer Success Manager", "SUP", 22, "London", "2021-11-15", 79000),
    P(30, "David", "Kim", "VP Engineering", "ENG", 1, "Berlin", "2017-01-09", 160000),
    P(31, "Sara", "Lindberg", "Engineering Manager", "ENG", 30, "Berlin", "2019-03-18", 118000),
    P(32, "Ahmed", "Hassan", "Senior Backend Engineer", "ENG", 31, "Berlin", "2019-09-02", 98000),
    P(33, "Emily", "Clarke", "Backend Engineer", "ENG", 31, "London", "2022-01-10", 78000),
    P(34, "Niklas", "Braun", "Frontend Engineer", "ENG", 31, "Berlin", "2022-06-01", 76000),
    P(35, "Mei", "Chen", "Data Engineer", "ENG", 31, "Remote", "2021-04-12", 88000),
    P(36, "Tobias", "Klein", "DevOps Engineer", "ENG", 30, "Berlin", "2020-11-02", 91000),
    P(37, "Laura", "Martins", "QA Engineer", "ENG", 31, "Berlin", "2023-05-02", 66000),
    P(38, "Victor", "Popescu", "Senior Frontend Engineer", "ENG", 31, "Remote", "2020-02-03", 95000),
    P(39, "Zoe", "Walker", "Product Designer", "ENG", 30, "London", "2022-08-22", 74000),
    P(40, "Rafael", "Silva", "Backend Engineer", "ENG", 31, "Berlin", "2023-02-13", 75000, status="on_leave"),
    P(
        41,
        "Sanjay",
        "Gupta",
        "Account Executive",
        "SAL",
        13,
        "London",
        "2020-06-01",
        74000,
        status="terminated",
    ),
]
BY_ID = {p.id: p for p in PEOPLE}
BY_USER = {p.username: p for p in PEOPLE}
AGENT = BY_ID[3]
ACCOUNT_EXECUTIVES = [14, 15, 16, 17]
SUPPORT_ENGINEERS = [24, 25, 26, 27, 28]

# The new hire announced in chat (not yet in the database: the onboarding task adds them).
NEW_HIRE = Person(42, "Lucas", "Ferreira", "Backend Engineer", "ENG", 31, "Berlin", "2025-04-14", 80000)


def active(ids: list[int] | None = None) -> list[Person]:
    pool = [BY_ID[i] for i in ids] if ids else PEOPLE
    return [p for p in pool if p.status == "active"]


def dept_of(person_id: int) -> Department:
    return DEPT_BY_CODE[BY_ID[person_id].dept]


HOLIDAYS = [
    ("2025-01-01", "New Year's Day", "ALL"),
    ("2025-03-08", "International Women's Day", "DE"),
    ("2025-04-18", "Good Friday", "ALL"),
    ("2025-04-21", "Easter Monday", "ALL"),
    ("2025-05-01", "Labour Day", "DE"),
    ("2025-05-05", "Early May Bank Holiday", "UK"),
    ("2025-05-29", "Ascension Day", "DE"),
    ("2025-05-26", "Spring Bank Holiday", "UK"),
    ("2025-06-09", "Whit Monday", "DE"),
    ("2025-08-25", "Summer Bank Holiday", "UK"),
    ("2025-10-03", "Day of German Unity", "DE"),
    ("2025-12-24", "Christmas Eve (company day off)", "ALL"),
    ("2025-12-25", "Christmas Day", "ALL"),
    ("2025-12-26", "Boxing Day / Second Christmas Day", "ALL"),
    ("2025-12-31", "New Year's Eve (company day off)", "ALL"),
]
