"""The mail app's state, as printed by `python3 -m mcp_wrappers.mail.snapshot`: every mailbox's
messages, and the journal of every message submitted (local or not: nothing leaves the sandbox,
so mail to an outside address is only in the journal).

Addresses are lower-case; checks name people by address or by the part before the @.
"""

from __future__ import annotations

from pydantic import Field

from core.strict import StrictModel


class MailAttachment(StrictModel):
    name: str
    content_type: str = ""
    size: int = 0
    sha256: str = ""


class MailMessage(StrictModel):
    """One message, in a mailbox's folder (`account`, `folder`) or in the journal (both empty)."""

    account: str = Field("", description="The mailbox holding it (an address); empty in the journal.")
    folder: str = Field("", description="INBOX, Sent, Archive, ...; empty in the journal.")
    message_id: str = ""
    sender: str = Field("", alias="from", description="The From address.")
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list, description="Known in the journal only.")
    subject: str = ""
    date: str = Field("", description="ISO 8601.")
    flags: list[str] = Field(default_factory=list, description="IMAP flags: \\Seen, \\Flagged, ...")
    in_reply_to: str = ""
    body: str = Field("", description="The text part (HTML reduced to text).")
    attachments: list[MailAttachment] = Field(default_factory=list)

    @property
    def recipients(self) -> list[str]:
        return [*self.to, *self.cc, *self.bcc]


class MailSnapshot(StrictModel):
    domains: list[str] = Field(default_factory=list, description="The company's mail domains.")
    messages: list[MailMessage] = Field(default_factory=list)
    agent: str = Field("", description="The agent's own address.")
    journal: list[MailMessage] = Field(
        default_factory=list, description="Every message submitted, the coworkers' replies included."
    )

    @property
    def sent(self) -> list[MailMessage]:
        """What the agent submitted (coworkers answer through the same servers: their mail is not the agent's)."""
        return [m for m in self.journal if not self.agent or same_address(m.sender, self.agent)]

    def sent_by(self, sender: str) -> list[MailMessage]:
        """What `sender` (an address, or the part before the @) submitted, oldest first."""
        return [m for m in self.journal if same_address(m.sender, sender)]

    def inside(self, address: str) -> bool:
        """Whether `address` is the company's (its domain is one of the snapshot's)."""
        return address.rpartition("@")[2].lower() in {d.lower() for d in self.domains}


def same_address(address: str, wanted: str) -> bool:
    """`wanted` names `address`: the whole address, or the part before the @ (any case)."""
    address, wanted = address.strip().lower(), wanted.strip().lower()
    return address == wanted or ("@" not in wanted and address.partition("@")[0] == wanted)
