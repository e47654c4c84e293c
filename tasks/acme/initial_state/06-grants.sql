-- What the agent may do: it acts as Jordan Lee, Finance & Operations Analyst.
-- Read access to everything an analyst uses; no access at all to salaries (HR only);
-- writes limited to the columns its job touches (claims review, ticket triage,
-- onboarding, price lists, recording payments). DELETE only on tickets and price list items.
GRANT USAGE ON SCHEMA public TO agent;
GRANT SELECT ON departments, employees, holidays, time_off, customers, contacts, products, price_lists,
    price_list_items, pipeline_stages, deals, invoices, invoice_lines, payments, sla_policies,
    support_tickets, expense_claims TO agent;
REVOKE ALL ON salaries FROM agent;

GRANT INSERT ON employees TO agent;
GRANT UPDATE (title, department_id, manager_id, location, status) ON employees TO agent;
GRANT INSERT, UPDATE, DELETE ON support_tickets TO agent;
GRANT UPDATE (status, reviewed_by, reviewed_on, review_note) ON expense_claims TO agent;
GRANT INSERT ON price_lists TO agent;
GRANT UPDATE (valid_to) ON price_lists TO agent;
GRANT INSERT, UPDATE, DELETE ON price_list_items TO agent;
GRANT INSERT ON payments TO agent;
GRANT UPDATE (status) ON invoices TO agent;
GRANT USAGE, SELECT ON SEQUENCE employees_id_seq, support_tickets_id_seq, price_lists_id_seq, payments_id_seq TO agent;
