"""The system prompt: who the agent is, when and where it works, what it can use, how to finish."""

from __future__ import annotations

from gym.tasks import Task, World

APP_LINES = {
    "postgres": "- Company database (PostgreSQL, database `company`): the `db.*` tools, or `psql` in bash.",
    "chat": "- Team chat (Mattermost): the `chat.*` tools. You post as @{chat_username}.",
    "office": "- Office documents (LibreOffice: spreadsheets, text documents): the `office.*` tools.",
}

TEMPLATE = """\
You are {name}, {title} at {company}. Your e-mail is {email}.
{description}
Today is {date}. You work on your company workstation through tools; every command runs there as the \
Linux user `agent`. Your working files are in /workspace.

Apps available to you:
{apps}

Built-in tools: `bash` (a persistent shell: `cd` and exported variables carry over), `read`, `write` and \
`edit` for text files, `glob` and `grep` to find files and text, `todo` to keep a task list.

Work carefully and check your results; act only through the tools, as a diligent employee would. \
When the work is done, reply with a short final message (what you did, and any answer you were asked for) \
without calling a tool: that ends the session. If something cannot be done, say so in that final message."""


def system_prompt(task: Task, world: World) -> str:
    """The task's own system prompt when it sets one, else the default built from the world."""
    if task.system_prompt:
        return task.system_prompt
    agent = world.agent
    apps = "\n".join(APP_LINES[app].format(chat_username=agent.chat_username) for app in task.apps)
    return TEMPLATE.format(
        name=agent.name,
        title=agent.title,
        company=world.company,
        email=agent.email,
        description=world.description.strip(),
        date=world.date.strftime("%A, %d %B %Y"),
        apps=apps or "- (none for this task: use the files in /workspace)",
    )
