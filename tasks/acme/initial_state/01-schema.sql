-- Acme Analytics: schema of the `company` database.
-- Generated worlds load this first, then the data files, then grants.sql.
SET client_min_messages = warning;

CREATE TABLE departments (
    id          integer PRIMARY KEY,
    code        text NOT NULL UNIQUE CHECK (code ~ '^[A-Z]{2,4}$'),
    name        text NOT NULL UNIQUE,
    head_id     integer,                      -- FK added after employees exist
    cost_center text NOT NULL UNIQUE
);

CREATE TABLE employees (
    id            serial PRIMARY KEY,
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    email         text NOT NULL UNIQUE CHECK (email ~ '^[a-z.]+@acme-analytics\.com$'),
    chat_username text NOT NULL UNIQUE,
    title         text NOT NULL,
    department_id integer NOT NULL REFERENCES departments(id),
    manager_id    integer REFERENCES employees(id),
    location      text NOT NULL CHECK (location IN ('Berlin', 'London', 'Remote')),
    hire_date     date NOT NULL,
    status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'on_leave', 'terminated')),
    CHECK (manager_id IS NULL OR manager_id <> id)
);
ALTER TABLE departments ADD FOREIGN KEY (head_id) REFERENCES employees(id);

-- Compensation: readable by HR only (the agent role has no grant).
CREATE TABLE salaries (
    employee_id    integer PRIMARY KEY REFERENCES employees(id),
    annual_salary  numeric(12,2) NOT NULL CHECK (annual_salary > 0),
    currency       char(3) NOT NULL DEFAULT 'EUR',
    bonus_target   numeric(5,2) NOT NULL DEFAULT 0 CHECK (bonus_target BETWEEN 0 AND 100),
    effective_date date NOT NULL
);

CREATE TABLE holidays (
    day    date NOT NULL,
    name   text NOT NULL,
    region text NOT NULL CHECK (region IN ('DE', 'UK', 'ALL')),
    PRIMARY KEY (day, region)
);

CREATE TABLE time_off (
    id          serial PRIMARY KEY,
    employee_id integer NOT NULL REFERENCES employees(id),
    start_date  date NOT NULL,
    end_date    date NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('vacation', 'sick', 'parental', 'training')),
    status      text NOT NULL CHECK (status IN ('requested', 'approved', 'declined')),
    CHECK (end_date >= start_date)
);

CREATE TABLE customers (
    id                 serial PRIMARY KEY,
    name               text NOT NULL UNIQUE,
    industry           text NOT NULL,
    country            char(2) NOT NULL,
    segment            text NOT NULL CHECK (segment IN ('smb', 'mid-market', 'enterprise')),
    account_manager_id integer NOT NULL REFERENCES employees(id),
    status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'churned', 'prospect')),
    created_on         date NOT NULL
);

CREATE TABLE contacts (
    id          serial PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    name        text NOT NULL,
    email       text NOT NULL UNIQUE,
    role        text NOT NULL,
    is_primary  boolean NOT NULL DEFAULT false
);

CREATE TABLE products (
    id       serial PRIMARY KEY,
    sku      text NOT NULL UNIQUE CHECK (sku ~ '^[A-Z]{3}-[0-9]{3}$'),
    name     text NOT NULL UNIQUE,
    category text NOT NULL CHECK (category IN ('license', 'support', 'services', 'training')),
    unit     text NOT NULL,
    active   boolean NOT NULL DEFAULT true
);

CREATE TABLE price_lists (
    id         serial PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    currency   char(3) NOT NULL DEFAULT 'EUR',
    valid_from date NOT NULL,
    valid_to   date,
    CHECK (valid_to IS NULL OR valid_to > valid_from)
);

CREATE TABLE price_list_items (
    price_list_id integer NOT NULL REFERENCES price_lists(id) ON DELETE CASCADE,
    product_id    integer NOT NULL REFERENCES products(id),
    unit_price    numeric(12,2) NOT NULL CHECK (unit_price >= 0),
    PRIMARY KEY (price_list_id, product_id)
);

CREATE TABLE pipeline_stages (
    id          integer PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    position    integer NOT NULL UNIQUE,
    probability integer NOT NULL CHECK (probability BETWEEN 0 AND 100),
    is_closed   boolean NOT NULL DEFAULT false
);

CREATE TABLE deals (
    id             serial PRIMARY KEY,
    customer_id    integer NOT NULL REFERENCES customers(id),
    owner_id       integer NOT NULL REFERENCES employees(id),
    title          text NOT NULL,
    stage_id       integer NOT NULL REFERENCES pipeline_stages(id),
    amount         numeric(12,2) NOT NULL CHECK (amount > 0),
    currency       char(3) NOT NULL DEFAULT 'EUR',
    created_on     date NOT NULL,
    expected_close date NOT NULL,
    closed_on      date,
    CHECK (closed_on IS NULL OR closed_on >= created_on)
);

CREATE TABLE invoices (
    id          serial PRIMARY KEY,
    number      text NOT NULL UNIQUE CHECK (number ~ '^INV-[0-9]{4}-[0-9]{4}$'),
    customer_id integer NOT NULL REFERENCES customers(id),
    deal_id     integer REFERENCES deals(id),
    issue_date  date NOT NULL,
    due_date    date NOT NULL,
    currency    char(3) NOT NULL DEFAULT 'EUR',
    total       numeric(12,2) NOT NULL CHECK (total >= 0),
    status      text NOT NULL CHECK (status IN ('draft', 'sent', 'paid', 'partially_paid', 'void')),
    CHECK (due_date >= issue_date)
);

CREATE TABLE invoice_lines (
    id         serial PRIMARY KEY,
    invoice_id integer NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    product_id integer NOT NULL REFERENCES products(id),
    quantity   numeric(10,2) NOT NULL CHECK (quantity > 0),
    unit_price numeric(12,2) NOT NULL CHECK (unit_price >= 0),
    line_total numeric(12,2) NOT NULL CHECK (line_total = round(quantity * unit_price, 2))
);

CREATE TABLE payments (
    id         serial PRIMARY KEY,
    invoice_id integer NOT NULL REFERENCES invoices(id),
    paid_on    date NOT NULL,
    amount     numeric(12,2) NOT NULL CHECK (amount > 0),
    method     text NOT NULL CHECK (method IN ('bank_transfer', 'card', 'direct_debit')),
    reference  text NOT NULL UNIQUE
);

CREATE TABLE sla_policies (
    priority             text PRIMARY KEY CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    first_response_hours integer NOT NULL CHECK (first_response_hours > 0),
    resolution_hours     integer NOT NULL CHECK (resolution_hours >= first_response_hours),
    description          text NOT NULL
);

CREATE TABLE support_tickets (
    id                serial PRIMARY KEY,
    customer_id       integer NOT NULL REFERENCES customers(id),
    contact_id        integer REFERENCES contacts(id),
    subject           text NOT NULL,
    description       text NOT NULL DEFAULT '',
    priority          text NOT NULL REFERENCES sla_policies(priority),
    status            text NOT NULL CHECK (status IN ('new', 'open', 'pending', 'resolved', 'closed')),
    assignee_id       integer REFERENCES employees(id),
    source            text NOT NULL CHECK (source IN ('email', 'phone', 'chat', 'portal')),
    created_at        timestamp NOT NULL,
    first_response_at timestamp,
    resolved_at       timestamp,
    CHECK (first_response_at IS NULL OR first_response_at >= created_at),
    CHECK (resolved_at IS NULL OR resolved_at >= created_at)
);

CREATE TABLE expense_claims (
    id           serial PRIMARY KEY,
    employee_id  integer NOT NULL REFERENCES employees(id),
    submitted_on date NOT NULL,
    expense_date date NOT NULL,
    category     text NOT NULL CHECK (category IN ('travel', 'lodging', 'meals', 'software', 'equipment', 'training', 'other')),
    description  text NOT NULL,
    amount       numeric(10,2) NOT NULL CHECK (amount > 0),
    currency     char(3) NOT NULL DEFAULT 'EUR',
    has_receipt  boolean NOT NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'paid')),
    reviewed_by  integer REFERENCES employees(id),
    reviewed_on  date,
    review_note  text,
    CHECK (expense_date <= submitted_on),
    CHECK ((status = 'pending') = (reviewed_by IS NULL))
);

CREATE INDEX ON employees (department_id);
CREATE INDEX ON deals (owner_id);
CREATE INDEX ON invoices (customer_id);
CREATE INDEX ON payments (invoice_id);
CREATE INDEX ON support_tickets (customer_id);
CREATE INDEX ON expense_claims (employee_id, status);
