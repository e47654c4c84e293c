"""In-container side of enterprise-gym: MCP servers and the apps they wrap.

`PYTHON` is how the host starts any of these modules in a sandbox: the image's
venv interpreter in isolated mode (`-I`), so neither the working directory, nor
`PYTHON*` variables, nor a user site-packages folder can put the agent's files
on `sys.path` (the venv's `egym.pth` adds /opt/egym). See docs/security.md.
"""

PYTHON = ("/opt/egym/venv/bin/python3", "-I")

# The servers' `serverInfo.version`: the enterprise-gym release (pyproject.toml), which the image does not install.
__version__ = "0.1.0"
