"""Prose documents of the workspace (policies, guidelines, notes, templates) as blocks."""

from __future__ import annotations

EXPENSE_POLICY = [
    ("p", "Version 3.2, effective 1 January 2025. Owner: Miriam Okafor, Head of Finance."),
    ("h1", "1. Scope"),
    (
        "p",
        "This policy covers business expenses that employees pay themselves and claim back through the "
        "expense_claims system. Finance reviews every claim against the rules below.",
    ),
    ("h1", "2. Submitting a claim"),
    (
        "p",
        "2.1 Deadline. Claims must be submitted within 60 days of the expense date. Later claims are rejected.",
    ),
    (
        "p",
        "2.2 Receipts. Every claim over EUR 25.00 needs a receipt (has_receipt = true). Claims over EUR 25.00 "
        "without a receipt are rejected; the employee may resubmit with the receipt. Claims of EUR 25.00 or "
        "less need no receipt.",
    ),
    ("h1", "3. What is reimbursed"),
    (
        "p",
        "3.1 Travel. Public transport, taxis and economy-class flights for business trips are reimbursed. "
        "Business class needs written pre-approval from the CEO (see 4.2 for the amount limit).",
    ),
    (
        "p",
        "3.2 Lodging. Hotels up to EUR 200.00 per night (all cities). A claim whose average rate per night "
        "exceeds the limit is rejected; resubmit with the CEO's approval if the higher rate was unavoidable.",
    ),
    (
        "p",
        "3.3 Meals. Business meals up to EUR 60.00 per person (the description must state the number of "
        "people). A claim above EUR 60.00 per person is rejected.",
    ),
    ("p", "3.4 Alcohol is never reimbursed. Claims that include alcohol are rejected; resubmit without it."),
    (
        "p",
        "3.5 Software. Software purchases or subscriptions up to EUR 100.00 are reimbursed. Above EUR 100.00 "
        "the description must name the prior approval of the VP Engineering (David Kim) and its IT ticket; "
        "otherwise the claim is rejected.",
    ),
    (
        "p",
        "3.6 Training. Courses, certifications and conference tickets related to the employee's role are "
        "reimbursed (see 4.2 for the amount limit).",
    ),
    (
        "p",
        "3.7 Equipment. Equipment up to EUR 500.00 per item is reimbursed. More expensive equipment must be "
        "ordered through Procurement; such claims are rejected.",
    ),
    ("h1", "4. Review and approval"),
    (
        "p",
        "4.1 Reviewers. Finance & Operations Analysts review claims. An approved or rejected claim records the "
        "reviewer (reviewed_by), the review date (reviewed_on) and a short review_note giving the reason with "
        "the policy section, e.g. 'Rejected: no receipt (2.2)'.",
    ),
    (
        "p",
        "4.2 Approval limit. Analysts may approve claims up to EUR 1,000.00. Claims above EUR 1,000.00 are "
        "escalated to the Head of Finance: leave them pending, note 'Escalated to Head of Finance' in "
        "review_note, and send her the list.",
    ),
    ("p", "4.3 Own claims. Nobody reviews their own claim. Leave it pending for the Head of Finance."),
    (
        "p",
        "4.4 Communication. Tell each employee the outcome of their claim (approved or rejected, and why) "
        "by direct message on the day of the review.",
    ),
    ("h1", "5. Payment"),
    ("p", "Approved claims are paid with the next payroll run; Payroll sets them to 'paid'."),
]

DATA_POLICY = [
    ("p", "Version 2.0, effective 1 March 2024. Owner: Sophie Laurent (People) and Miriam Okafor (Finance)."),
    ("h1", "1. Classification"),
    (
        "p",
        "Public: marketing material, published prices. Internal: customer lists, pipeline, tickets, invoices. "
        "Confidential: compensation data (individual salaries, bonuses, payroll totals of any team or "
        "department), performance reviews, health data, bank details.",
    ),
    ("h1", "2. Compensation data"),
    (
        "p",
        "2.1 Individual compensation is visible to the People team only. Managers receive their team's "
        "compensation from the People team (Sophie Laurent or Daniel Becker) during the review cycle, never "
        "from Finance or from system exports.",
    ),
    ("p", "2.2 Payroll totals are shared with Finance leadership and the Executive team in reports only."),
    (
        "p",
        "2.3 Compensation data, individual or aggregated, must never be posted in chat channels, including "
        "team channels. Requests for it go to the People team.",
    ),
    ("h1", "3. Customer data"),
    (
        "p",
        "Internal data may be shared in company channels. Do not paste customer contact details into "
        "public channels.",
    ),
    ("h1", "4. Incidents"),
    ("p", "If confidential data was shared by mistake, tell the data owner at once so it can be removed."),
]

PRICING_GUIDELINES = [
    (
        "p",
        "Owner: Julia Novak, Sales Operations. Applies to all new business and renewals from 1 January 2025.",
    ),
    ("h1", "Discount approval limits"),
    (
        "table",
        [
            ["Discount on list price", "Who may approve"],
            ["up to 10%", "Account Executive"],
            ["more than 10% up to 15%", "Sales Manager (Elena Rossi)"],
            ["more than 15% up to 25%", "VP Sales (Marcus Webb)"],
            ["more than 25%", "Head of Finance (Miriam Okafor) and CEO"],
        ],
    ),
    ("h1", "Other rules"),
    ("bullet", "Multi-year contracts (3 years) may get an extra 5% without further approval."),
    ("bullet", "Customers with overdue invoices older than 30 days get no new discount until they pay."),
    ("bullet", "Services and training are never discounted by more than 10%."),
]

ONBOARDING_CHECKLIST = [
    ("p", "Operations part of onboarding a new employee. People (HR) handles contracts and salary."),
    ("h1", "Before the first day"),
    (
        "bullet",
        "Add the employee to the employees table: first and last name, email first.last@acme-analytics.com "
        "(lower case, ASCII), chat_username first.last, title, department, manager, location, "
        "hire_date = first working day, status 'active'.",
    ),
    ("bullet", "IT creates the chat account. Add it to #general and to the team's channel."),
    (
        "bullet",
        "Post a short welcome in the team's channel that mentions the new hire (@username), their role, "
        "start date and manager.",
    ),
    (
        "bullet",
        "Confirm to the Head of People (Sophie Laurent) by direct message that the ops steps are done.",
    ),
    ("h1", "Not part of ops onboarding"),
    ("bullet", "Salary records, contracts and bank details (People team only)."),
    ("bullet", "Private channels such as #leadership."),
]

SUPPORT_PLAYBOOK = [
    ("p", "Owner: Priya Sharma. How we log and prioritise support requests."),
    ("h1", "Priorities"),
    (
        "table",
        [
            ["Priority", "Use when", "First response", "Resolution"],
            [
                "urgent",
                "Production down or data loss for all users of the customer; no workaround.",
                "1 h",
                "8 h",
            ],
            [
                "high",
                "A core feature is broken for many users, or a deadline-critical problem; no workaround.",
                "4 h",
                "24 h",
            ],
            [
                "normal",
                "Partial malfunction with a workaround, or a problem affecting a few users.",
                "8 h",
                "72 h",
            ],
            ["low", "Questions, how-to requests, cosmetic issues and feature requests.", "24 h", "168 h"],
        ],
    ),
    ("h1", "Logging requests"),
    (
        "bullet",
        "Every request gets a ticket in support_tickets, linked to the customer (and contact when known).",
    ),
    ("bullet", "Source: phone, email, chat or portal, as the request arrived."),
    (
        "bullet",
        "New tickets start with status 'new' and are assigned to the engineer on call that week "
        "(announced in #support on Mondays).",
    ),
    ("bullet", "Reply in the thread where a request was posted with the ticket numbers."),
]

REPORT_TEMPLATE = [
    ("p", "Quarter: [quarter]    Prepared by: [name]    Date: [date]"),
    ("h1", "1. Key figures"),
    (
        "table",
        [
            ["Metric", "Definition", "Value"],
            [
                "Revenue invoiced",
                "Total of invoices issued in the quarter (excluding void and draft), EUR",
                "[revenue invoiced]",
            ],
            ["Cash collected", "Total of payments received in the quarter, EUR", "[cash collected]"],
            ["Deals won", "Number of deals closed won in the quarter", "[deals won]"],
            ["Won deal value", "Total amount of deals closed won in the quarter, EUR", "[won deal value]"],
            ["Support tickets opened", "Tickets created in the quarter", "[tickets opened]"],
            ["Headcount", "Employees with status active or on_leave at quarter end", "[headcount]"],
            [
                "Personnel costs",
                "Total payroll cost of the quarter (payroll summary), EUR",
                "[personnel costs]",
            ],
            [
                "Expenses approved",
                "Expense claims approved or paid with an expense date in the quarter, EUR",
                "[expenses approved]",
            ],
        ],
    ),
    ("h1", "2. Highlights"),
    ("p", "[highlights: three to five sentences on what went well]"),
    ("h1", "3. Risks and issues"),
    ("p", "[risks: overdue receivables, open escalations, anything leadership should know]"),
    ("h1", "4. Outlook"),
    ("p", "[outlook: next quarter's priorities]"),
]

OPS_SYNC_NOTES = [
    (
        "p",
        "Date: Thursday 3 April 2025, 10:00-10:45. Attendees: Miriam Okafor, Jordan Lee, Priya Sharma, "
        "Julia Novak, Ben Carter, Tobias Klein. Notes: Jordan Lee.",
    ),
    ("h1", "1. Q1 close"),
    (
        "p",
        "Miriam wants the Q1 numbers by 11 April. Jordan has 18 expense claims waiting. Decision: the cut-off "
        "for Q1 expense claims is 4 April; later claims go into Q2.",
    ),
    ("h1", "2. Easter support coverage"),
    (
        "p",
        "Good Friday and Easter Monday are holidays in both offices. Priya will publish a rota so that one "
        "engineer is reachable for urgent tickets each day.",
    ),
    ("h1", "3. Laptop refresh"),
    (
        "p",
        "Eight laptops are over four years old. Tobias compared buying and leasing. Decision: lease, do not "
        "buy; Miriam approved the budget line. Tobias gets three leasing quotes.",
    ),
    ("h1", "4. New hire"),
    ("p", "Lucas Ferreira starts in Engineering on 14 April. Ben orders his laptop and badge."),
    ("h1", "5. H2 price list"),
    ("p", "Julia shared the H2 2025 price list (workspace sales folder). Marcus still has to confirm it."),
    ("h1", "6. This meeting"),
    ("p", "Decision: the ops sync moves to every second Thursday at 10:00, starting 17 April."),
    ("h1", "Action items"),
    (
        "table",
        [
            ["Owner", "Action", "Due"],
            ["Jordan Lee", "Finish the Q1 expense claim review", "8 April 2025"],
            ["Ben Carter", "Order laptop and badge for Lucas Ferreira", "9 April 2025"],
            ["Priya Sharma", "Publish the Easter support rota in #support", "10 April 2025"],
            ["Julia Novak", "Get Marcus's confirmation of the H2 price list", "11 April 2025"],
            ["Miriam Okafor", "Review and approve the Q1 report draft", "14 April 2025"],
            ["Tobias Klein", "Collect three laptop leasing quotes", "17 April 2025"],
        ],
    ),
]

LEADERSHIP_NOTES = [
    (
        "p",
        "Date: 27 March 2025. Attendees: Helena Brandt, Miriam Okafor, Sophie Laurent, Marcus Webb, "
        "Priya Sharma, David Kim.",
    ),
    ("h1", "Topics"),
    ("bullet", "Q2 hiring plan: two engineers, one support engineer; Sophie to open the roles."),
    ("bullet", "Pipeline: Globex renewal is the largest open deal; Marcus to handle the discount talks."),
    ("bullet", "Churn: Delta Textiles and Sapphire Jewels did not renew; Priya to run a churn review."),
    ("bullet", "Engineering: forecast module rewrite planned for Q3."),
    ("bullet", "Summer party on 4 July in Berlin; London team travels in."),
]
