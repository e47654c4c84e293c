"""The mail overlay's format: `initial_state.mail` files (YAML), loaded by mcp_wrappers.mail.load.

    domains: [acme.example]
    accounts:
      - {address: dana.lee@acme.example, name: Dana Lee, agent: true}
      - {address: raj.patel@acme.example, name: Raj Patel}
    messages:
      - account: dana.lee@acme.example    # whose mailbox holds it
        folder: INBOX                     # INBOX, Sent, Archive, Drafts, Trash or any other
        from: lena.kraus@client.example
        to: [dana.lee@acme.example]
        subject: Quote for 40 seats?
        date: 2025-04-03T09:15:00Z
        seen: false
        body: |
          Hello Dana, ...
        attachments:
          - {path: workspace/price-list.xlsx}    # a file of the overlay (its workspace/ folder)
          - {name: notes.txt, text: "inline text"}

Strict: an unknown key is an error naming it. A message's Message-ID is derived from its
content unless given, so the same file gives the same mailboxes.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Account(_Strict):
    address: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    name: str = ""
    agent: bool = Field(False, description="The agent's own account (its password goes to the agent).")


class Attachment(_Strict):
    path: str | None = Field(None, description="A file of the overlay, relative to its root.")
    name: str | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Attachment:
        if (self.path is None) == (self.text is None):
            raise ValueError("an attachment has either `path` or `text` (with `name`)")
        if self.text is not None and not self.name:
            raise ValueError("an inline attachment needs a `name`")
        return self


class Message(_Strict):
    account: str
    folder: str = "INBOX"
    sender: str = Field(alias="from")
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    subject: str = ""
    date: dt.datetime
    seen: bool = True
    flagged: bool = False
    message_id: str | None = None
    in_reply_to: str | None = None
    body: str = ""
    attachments: list[Attachment] = Field(default_factory=list)

    def mid(self) -> str:
        """Its Message-ID: as given, else a digest of what it is."""
        if self.message_id:
            return self.message_id if self.message_id.startswith("<") else f"<{self.message_id}>"
        digest = hashlib.sha256(
            "\0".join(
                [self.sender, ",".join(self.to), self.subject, self.date.isoformat(), self.body]
            ).encode()
        ).hexdigest()[:20]
        return f"<{digest}@{self.sender.rpartition('@')[2]}>"


class MailFile(_Strict):
    domains: list[str] = Field(
        default_factory=list, description="The company's domains (default: the accounts')."
    )
    accounts: list[Account] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_accounts(self) -> MailFile:
        known = {a.address.lower() for a in self.accounts}
        for index, message in enumerate(self.messages):
            if message.account.lower() not in known:
                raise ValueError(f"messages[{index}].account: {message.account!r} is not one of the accounts")
        return self
