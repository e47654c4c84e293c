"""Mail, served by real servers in the sandbox: Postfix (SMTP submission on 127.0.0.1:587) and
Dovecot (IMAP on 127.0.0.1:143), configured by image/setup and started by image/start.

- load: the initial mailboxes from the overlay's mail/*.yaml (mcp_wrappers.mail.mailfile);
- journal: Postfix's filter that keeps every submitted message for the grader;
- snapshot: every mailbox and the journal as JSON (the grader's view, grader/mailstate.py);
- client: the one IMAP/SMTP client of all of them, on the standard library;
- server: the agent's MCP server (`python3 -m mcp_wrappers.mail`).
"""

from pathlib import Path

SMTP_PORT = 587
IMAP_PORT = 143
MASTER_USER = "egym-master"  # Dovecot's master user: logs in as ADDRESS*egym-master
SECRETS = Path("/egym/secrets")
MASTER_FILE = SECRETS / "mail-master"  # the master password (root:grader 0640)
ACCOUNTS_FILE = SECRETS / "mail-accounts.json"  # addresses, names, domains (root:grader 0640)
AGENT_ENV_FILE = Path("/home/agent/.config/egym/mail.env")  # the agent's address and password (agent 0600)
JOURNAL = Path("/var/lib/egym-mail/journal")  # one JSON file per submitted message (vmail:grader)
RELAY_USER = "egym-relay"  # the journal filter's account on 127.0.0.1:10025 (image/setup)
RELAY_FILE = Path("/var/lib/egym-mail/relay-password")  # its password (vmail 0600)
REINJECT_PORT = 10025
POSTFIX_TABLES = Path("/etc/postfix/egym")
DOVECOT_USERS = Path("/etc/dovecot/egym/users")
DOVECOT_MASTER = Path("/etc/dovecot/egym/master")
