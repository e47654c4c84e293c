"""Fixed catalogue data: customers, products, price lists, pipeline stages, SLAs."""

from __future__ import annotations

# (name, industry, country, segment); the first few are named by tasks.
CUSTOMERS = [
    ("Globex Industries", "Manufacturing", "DE", "enterprise"),
    ("Initech GmbH", "Software", "DE", "mid-market"),
    ("Northwind Traders", "Wholesale", "GB", "mid-market"),
    ("Helios Energy", "Energy", "DE", "enterprise"),
    ("Bluebird Logistics", "Logistics", "NL", "mid-market"),
    ("Vandelay Imports", "Wholesale", "GB", "smb"),
    ("Stark Medical Devices", "Healthcare", "DE", "enterprise"),
    ("Oceanic Freight", "Logistics", "DK", "mid-market"),
    ("Pinecrest Insurance", "Insurance", "GB", "enterprise"),
    ("Brightline Retail", "Retail", "FR", "mid-market"),
    ("Kestrel Pharma", "Healthcare", "CH", "enterprise"),
    ("Marlowe & Finch", "Legal", "GB", "smb"),
    ("Tessera Bank", "Finance", "DE", "enterprise"),
    ("Quantum Foods", "Food & Beverage", "NL", "mid-market"),
    ("Redwood Analytics", "Software", "SE", "smb"),
    ("Sunfield Agritech", "Agriculture", "ES", "smb"),
    ("Arcadia Hotels", "Hospitality", "IT", "mid-market"),
    ("Cobalt Mining", "Mining", "SE", "enterprise"),
    ("Delta Textiles", "Manufacturing", "PT", "smb"),
    ("Everest Telecom", "Telecommunications", "AT", "enterprise"),
    ("Falcon Aerospace", "Aerospace", "FR", "enterprise"),
    ("Granite Construction AG", "Construction", "CH", "mid-market"),
    ("Harbor Shipping", "Logistics", "DE", "mid-market"),
    ("Iris Cosmetics", "Retail", "FR", "smb"),
    ("Juniper Health", "Healthcare", "GB", "mid-market"),
    ("Kairos Education", "Education", "GR", "smb"),
    ("Lumen Solar", "Energy", "ES", "mid-market"),
    ("Meridian Publishing", "Media", "GB", "smb"),
    ("Nimbus Cloud Services", "Software", "IE", "mid-market"),
    ("Orion Automotive", "Automotive", "DE", "enterprise"),
    ("Polaris Chemicals", "Chemicals", "BE", "enterprise"),
    ("Quill Stationery", "Retail", "GB", "smb"),
    ("Riverside Clinics", "Healthcare", "IE", "smb"),
    ("Sapphire Jewels", "Retail", "IT", "smb"),
    ("Titan Steelworks", "Manufacturing", "PL", "enterprise"),
    ("Urban Mobility", "Transport", "DE", "mid-market"),
    ("Verdant Foods", "Food & Beverage", "DK", "smb"),
    ("Westwind Airlines", "Aviation", "GB", "enterprise"),
    ("Xenon Labs", "Research", "CH", "smb"),
    ("Yellowstone Outdoor", "Retail", "AT", "smb"),
    ("Zephyr Wind Farms", "Energy", "DK", "mid-market"),
    ("Alder & Co Accountants", "Professional Services", "GB", "smb"),
    ("Beacon Security", "Security", "NL", "mid-market"),
    ("Cascade Water", "Utilities", "FR", "mid-market"),
    ("Dunmore Estates", "Real Estate", "IE", "smb"),
]

FIRST_NAMES = [
    "Anna", "Bernd", "Carla", "Dmitri", "Eva", "Frank", "Gita", "Hugo", "Ines", "Jan", "Karin", "Liam",
    "Marta", "Nils", "Olga", "Pablo", "Quentin", "Rosa", "Stefan", "Tara", "Ulrich", "Vera", "Willem",
    "Ximena", "Yusuf", "Zara", "Aoife", "Bruno", "Claire", "Dario", "Elif", "Fergus",
]
LAST_NAMES = [
    "Albrecht", "Baker", "Castillo", "Dvorak", "Engel", "Fischer", "Gallagher", "Horvath", "Ivanova",
    "Jansen", "Kowalski", "Larsen", "Moreau", "Nielsen", "Olsen", "Peters", "Quinn", "Russo", "Svensson",
    "Thompson", "Underwood", "Varga", "Wagner", "Young", "Zimmermann", "Byrne", "Conti", "Duarte",
]
CONTACT_ROLES = ["CFO", "Head of IT", "Operations Director", "Data Team Lead", "Procurement Manager", "CTO", "BI Analyst"]

# (sku, name, category, unit, 2025 H1 list price, active)
PRODUCTS = [
    ("LIC-100", "Acme Insights Starter", "license", "seat/year", 420, True),
    ("LIC-110", "Acme Insights Professional", "license", "seat/year", 780, True),
    ("LIC-120", "Acme Insights Enterprise", "license", "seat/year", 1150, True),
    ("LIC-200", "Data Connector Pack", "license", "pack/year", 2400, True),
    ("LIC-210", "Embedded Analytics Add-on", "license", "instance/year", 6000, True),
    ("LIC-220", "Advanced Forecasting Module", "license", "instance/year", 4800, True),
    ("LIC-900", "Legacy Reporting Server", "license", "server/year", 3000, False),
    ("SUP-100", "Standard Support", "support", "year", 1800, True),
    ("SUP-110", "Premium Support", "support", "year", 5400, True),
    ("SUP-120", "Dedicated Success Manager", "support", "year", 14000, True),
    ("SRV-100", "Implementation Package", "services", "package", 9500, True),
    ("SRV-110", "Data Migration", "services", "day", 1250, True),
    ("SRV-120", "Custom Dashboard Development", "services", "day", 1100, True),
    ("SRV-130", "Platform Health Check", "services", "package", 3200, True),
    ("TRN-100", "Administrator Training", "training", "session", 1600, True),
    ("TRN-110", "End-User Training Workshop", "training", "session", 2200, True),
    ("TRN-120", "Online Academy Access", "training", "seat/year", 150, True),
]

# (id, name, currency, valid_from, valid_to, factor applied to the 2025 H1 list price)
PRICE_LISTS = [
    (1, "Standard 2024", "EUR", "2024-01-01", "2024-12-31", "0.94"),
    (2, "Standard 2025 H1", "EUR", "2025-01-01", None, "1.00"),
    (3, "Partner 2025", "EUR", "2025-01-01", None, "0.80"),
]

# New prices for the second half of 2025 (the price-list-import task loads these from a spreadsheet).
H2_2025_PRICES = {
    "LIC-100": 450, "LIC-110": 820, "LIC-120": 1200, "LIC-200": 2500, "LIC-210": 6300, "LIC-220": 4950,
    "SUP-100": 1900, "SUP-110": 5600, "SUP-120": 14500, "SRV-100": 9900, "SRV-110": 1300,
    "SRV-120": 1150, "SRV-130": 3300, "TRN-100": 1650, "TRN-110": 2300, "TRN-120": 160,
}

# (id, name, position, probability, is_closed)
STAGES = [
    (1, "Lead", 1, 10, False),
    (2, "Qualified", 2, 20, False),
    (3, "Demo", 3, 40, False),
    (4, "Proposal", 4, 60, False),
    (5, "Negotiation", 5, 80, False),
    (6, "Closed Won", 6, 100, True),
    (7, "Closed Lost", 7, 0, True),
]
WON, LOST = 6, 7

# (priority, first response hours, resolution hours, when to use it)
SLAS = [
    ("urgent", 1, 8, "Production down or data loss for all users of the customer; no workaround."),
    ("high", 4, 24, "A core feature is broken for many users, or a deadline-critical problem; no workaround."),
    ("normal", 8, 72, "Partial malfunction with a workaround, or a problem affecting a few users."),
    ("low", 24, 168, "Questions, how-to requests, cosmetic issues and feature requests."),
]
TICKET_SUBJECTS = {
    "urgent": ["Dashboards not loading for any user", "Data sync stopped, all reports empty", "Login fails for entire tenant"],
    "high": ["Scheduled reports not sent", "Connector to SAP failing since update", "Export to Excel times out",
             "SSO login broken for new users", "Forecast module shows wrong totals"],
    "normal": ["Chart colours reset after refresh", "Slow query on sales dashboard", "CSV import skips some rows",
               "Filter on region not saved", "Email alert sent twice", "Wrong time zone in report header"],
    "low": ["How to share a dashboard externally?", "Request: dark mode", "Question about seat licences",
            "Typo in German UI", "How to schedule a weekly export?", "Add our logo to PDF exports"],
}
