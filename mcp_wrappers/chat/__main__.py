from mcp_wrappers.chat.server import main

main()
